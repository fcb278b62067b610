"""Three ds-sync processes share the streams; random ones are SIGKILLed while 8 producers
write: nothing lost or doubled.

The processes divide the shards between them (leases on ds-server). At
random moments one of them is killed and started again a moment later; its
shards are taken over by the others once their leases run out, and handed
back when it is up again. ``DS_GROUP_KILL_EVENTS`` and ``DS_GROUP_KILL_KILLS``
make the run longer.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from typing import TYPE_CHECKING

import httpx
import msgspec
from sync_support import count_events, group, rows, wait_until
from test_sync_kill import produce

if TYPE_CHECKING:
    import pytest
    from sync_support import Streams, SyncProcess

PRODUCERS = 8
PROCESSES = 3
EVENTS = int(os.environ.get("DS_GROUP_KILL_EVENTS", "10000"))
KILLS = int(os.environ.get("DS_GROUP_KILL_KILLS", "6"))
STREAMS = 20
STALE = "ds_sync_stale_commits_total"


async def kill_at(
    processes: list[SyncProcess],
    thresholds: list[int],
    progress: list[int],
    rng: random.Random,
    stale: list[float],
) -> list[str]:
    """SIGKILL a random process when production passes each threshold; restart it after a
    moment (long enough, sometimes, for its leases to run out and be taken over)."""
    killed = []
    for threshold in thresholds:
        while progress[0] < threshold:  # noqa: ASYNC110 - a plain counter; polling is simplest
            await asyncio.sleep(0.005)
        victim = rng.choice([p for p in processes if p.process is not None])
        stale.append(await asyncio.to_thread(_stale, victim))
        victim.kill()
        killed.append(f"{victim.instance[-1]}@{progress[0]}")
        await asyncio.sleep(rng.uniform(0.2, 3.0))
        await asyncio.to_thread(victim.start, wait=False)
    return killed


def _stale(process: SyncProcess) -> float:
    try:
        return process.metric(STALE)
    except (AssertionError, httpx.HTTPError):
        return 0.0  # not ready yet (just restarted)


async def run_load(
    processes: list[SyncProcess], streams: Streams, seed: int, stale: list[float]
) -> list[str]:
    rng = random.Random(seed)
    thresholds = sorted(rng.sample(range(EVENTS // 20, EVENTS - EVENTS // 20), KILLS))
    progress = [0]
    per_producer = EVENTS // PRODUCERS
    producers = [
        produce(streams, p, per_producer, random.Random(seed * 100 + p), progress)
        for p in range(PRODUCERS)
    ]
    killer = asyncio.ensure_future(kill_at(processes, thresholds, progress, rng, stale))
    await asyncio.gather(*producers)
    return await killer


def test_three_processes_sigkilled_lose_and_double_nothing(
    ds_server: str, postgres_db: str, streams: Streams, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = [streams.create(f"s{n}") for n in range(STREAMS)]
    processes = group(ds_server, postgres_db, f"{streams.bucket}/*", PROCESSES)
    try:
        for process in processes:
            process.start()
        seed = random.randrange(1_000_000)
        stale: list[float] = []
        started = time.monotonic()
        killed = asyncio.run(run_load(processes, streams, seed, stale))
        produced_in = time.monotonic() - started
        for process in processes:
            wait_until(process.ready, timeout=60, what=f"{process.instance} restarted")
        wait_until(lambda: count_events(postgres_db) >= EVENTS, timeout=90, what="every event")

        def caught_up() -> bool:
            tails = {
                p: httpx.head(streams.url(p.split("/")[1])).headers["Stream-Next-Offset"]
                for p in paths
            }
            found = dict(rows(postgres_db, "SELECT stream_name, next_offset FROM sync_checkpoints"))
            return all(found.get(p) == tail for p, tail in tails.items())

        wait_until(caught_up, timeout=90, what="every checkpoint at its stream's tail")
        caught_up_in = time.monotonic() - started
        stale += [_stale(process) for process in processes]
        gained = sum(p.metric("ds_sync_shards_gained_total") for p in processes)
        for process in processes:
            assert process.stop() == 0

        stored = rows(
            postgres_db,
            "SELECT stream_name, event_key FROM session_events "
            "ORDER BY stream_name, ds_offset, event_index",
        )
        keys = [key for _, key in stored]
        expected = {f"msg:{p}-{n}" for p in range(PRODUCERS) for n in range(EVENTS // PRODUCERS)}
        lost = len(expected - set(keys))
        duplicated = len(keys) - len(set(keys))
        in_order = 0
        for path in paths:
            in_stream = [
                msgspec.json.decode(m)["key"] for m in streams.read_all(path.split("/")[1])
            ]
            in_table = [key for stream, key in stored if stream == path]
            in_order += in_stream == in_table
        with capsys.disabled():
            print(
                f"\ngroup kill test (seed {seed}): {PROCESSES} ds-sync processes sharing 8 "
                f"shards; {PRODUCERS} producers wrote {EVENTS} events over {STREAMS} streams in "
                f"{produced_in:.1f}s; SIGKILLed {len(killed)} times (process@events: "
                f"{', '.join(killed)}), each restarted 0.2-3 s later; caught up "
                f"{caught_up_in:.1f}s after the start; {gained:.0f} shard takeovers since the "
                f"last restarts, {sum(stale):.0f} commits refused by the checkpoint compare-and-"
                f"set; session_events holds {len(keys)} rows: {lost} lost, {duplicated} "
                f"duplicated, {in_order}/{STREAMS} streams in stream order"
            )
        assert len(killed) == KILLS
        assert (len(keys), lost, duplicated, in_order) == (EVENTS, 0, 0, STREAMS)
    finally:
        for process in processes:
            process.kill()

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
from functools import partial
from typing import TYPE_CHECKING

import httpx
from sync_support import count_events, group, passed, wait_until
from test_sync_kill import (
    PRODUCERS,
    STREAMS,
    Tally,
    caught_up,
    produce_and_kill,
    tally,
)

if TYPE_CHECKING:
    import pytest
    from sync_support import Streams, SyncProcess

PROCESSES = 3
EVENTS = int(os.environ.get("DS_GROUP_KILL_EVENTS", "10000"))
KILLS = int(os.environ.get("DS_GROUP_KILL_KILLS", "6"))
STALE = "ds_sync_stale_commits_total"


async def kill_at(
    processes: list[SyncProcess],
    stale: list[float],
    rng: random.Random,
    thresholds: list[int],
    progress: list[int],
) -> list[str]:
    """SIGKILL a random running process when production passes each threshold; restart it
    0.2-3 s later (long enough, sometimes, for its leases to run out and be taken over)
    while the next kills go on."""
    killed = []
    restarts = []
    for threshold in thresholds:
        await passed(progress, threshold)
        while not (running := [p for p in processes if p.process is not None]):  # noqa: ASYNC110
            await asyncio.sleep(0.05)
        victim = rng.choice(running)
        stale.append(await asyncio.to_thread(_stale, victim))
        victim.kill()
        killed.append(f"{victim.instance[-1]}@{progress[0]}")
        restarts.append(asyncio.ensure_future(_restart(victim, rng.uniform(0.2, 3.0))))
    await asyncio.gather(*restarts)
    return killed


async def _restart(process: SyncProcess, after_secs: float) -> None:
    await asyncio.sleep(after_secs)
    await asyncio.to_thread(process.start, wait=False)


def _stale(process: SyncProcess) -> float:
    try:
        return process.metric(STALE)
    except (AssertionError, httpx.HTTPError):
        return 0.0  # not ready yet (just restarted)


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
        killed = asyncio.run(
            produce_and_kill(
                streams,
                seed,
                EVENTS,
                KILLS,
                partial(kill_at, processes, stale, random.Random(seed + 1)),
            )
        )
        produced_in = time.monotonic() - started
        for process in processes:
            wait_until(process.ready, timeout=60, what=f"{process.instance} restarted")
        wait_until(lambda: count_events(postgres_db) >= EVENTS, timeout=90, what="every event")
        wait_until(
            lambda: caught_up(streams, paths, postgres_db),
            timeout=90,
            what="every checkpoint at its stream's tail",
        )
        caught_up_in = time.monotonic() - started
        stale += [_stale(process) for process in processes]
        gained = sum(p.metric("ds_sync_shards_gained_total") for p in processes)
        for process in processes:
            assert process.stop() == 0

        found = tally(streams, paths, postgres_db, EVENTS)
        with capsys.disabled():
            print(
                f"\ngroup kill test (seed {seed}): {PROCESSES} ds-sync processes sharing 8 "
                f"shards; {PRODUCERS} producers wrote {EVENTS} events over {STREAMS} streams in "
                f"{produced_in:.1f}s; SIGKILLed {len(killed)} times (process@events: "
                f"{', '.join(killed)}), each restarted 0.2-3 s later; caught up "
                f"{caught_up_in:.1f}s after the start; {gained:.0f} shard takeovers since the "
                f"last restarts, {sum(stale):.0f} commits refused by the checkpoint compare-and-"
                f"set; {found}"
            )
        assert len(killed) == KILLS
        assert found == Tally(EVENTS, 0, 0, STREAMS)
    finally:
        for process in processes:
            process.kill()

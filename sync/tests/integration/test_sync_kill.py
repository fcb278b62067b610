"""ds-sync SIGKILLed at random moments while 8 producers write: nothing lost or doubled."""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, TypeVar

import httpx
import msgspec
from sync_support import JSON, count_events, kill_at, rows, wait_until

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    import pytest
    from sync_support import Streams, SyncProcess

Killed = TypeVar("Killed")

PRODUCERS = 8
EVENTS = 10_000
STREAMS = 20
KILLS = 5


async def produce(
    streams: Streams, producer: int, count: int, rng: random.Random, progress: list[int]
) -> None:
    """Append ``count`` events to random streams, 1 to 10 per request, as an idempotent producer."""
    seq = [0] * STREAMS
    n = 0
    async with httpx.AsyncClient(timeout=30) as http:
        while n < count:
            target = rng.randrange(STREAMS)
            size = min(rng.randint(1, 10), count - n)
            events = [_event(producer, number) for number in range(n, n + size)]
            headers = {
                **JSON,
                "Producer-Id": f"producer-{producer}",
                "Producer-Epoch": "0",
                "Producer-Seq": str(seq[target]),
            }
            response = await http.post(
                streams.url(f"s{target}"), content=msgspec.json.encode(events), headers=headers
            )
            assert response.status_code in (200, 204), response.text
            seq[target] += 1
            n += size
            progress[0] += size


def _event(producer: int, n: int) -> dict[str, object]:
    """Both shapes of session event, alternately; the key is unique across the test."""
    key = f"msg:{producer}-{n}"
    value = {"producer": producer, "n": n}
    if n % 2:
        headers = {"operation": "insert", "timestamp": "2026-11-26T10:00:00Z"}
        return {"type": "message", "key": key, "value": value, "headers": headers}
    return {"type": "presence", "key": key, "operation": "set", "value": value}


async def produce_and_kill(
    streams: Streams,
    seed: int,
    events: int,
    kills: int,
    killer: Callable[[list[int], list[int]], Awaitable[Killed]],
) -> Killed:
    """``PRODUCERS`` producers write ``events`` events; ``killer`` gets ``kills`` random points
    of the run (away from its ends) and the events written so far."""
    rng = random.Random(seed)
    thresholds = sorted(rng.sample(range(events // 20, events - events // 20), kills))
    progress = [0]
    per_producer = events // PRODUCERS
    producers = [
        produce(streams, p, per_producer, random.Random(seed * 100 + p), progress)
        for p in range(PRODUCERS)
    ]
    killing = asyncio.ensure_future(killer(thresholds, progress))
    await asyncio.gather(*producers)
    return await killing


def caught_up(streams: Streams, paths: list[str], postgres_db: str) -> bool:
    """Whether every stream's checkpoint is at its tail."""
    tails = {
        p: httpx.head(streams.url(p.split("/")[1])).headers["Stream-Next-Offset"] for p in paths
    }
    found = dict(rows(postgres_db, "SELECT stream_name, next_offset FROM sync_checkpoints"))
    return all(found.get(p) == tail for p, tail in tails.items())


@dataclass(frozen=True, slots=True)
class Tally:
    """session_events against what the producers wrote."""

    rows: int
    lost: int
    duplicated: int
    in_order: int  # streams whose rows are the stream's messages, in stream order

    def __str__(self) -> str:
        return (
            f"session_events holds {self.rows} rows: {self.lost} lost, {self.duplicated} "
            f"duplicated, {self.in_order}/{STREAMS} streams in stream order"
        )


def tally(streams: Streams, paths: list[str], postgres_db: str, events: int) -> Tally:
    stored = rows(
        postgres_db,
        "SELECT stream_name, event_key FROM session_events "
        "ORDER BY stream_name, ds_offset, event_index",
    )
    keys = [key for _, key in stored]
    expected = {f"msg:{p}-{n}" for p in range(PRODUCERS) for n in range(events // PRODUCERS)}
    in_order = 0
    for path in paths:
        in_stream = [msgspec.json.decode(m)["key"] for m in streams.read_all(path.split("/")[1])]
        in_table = [key for stream, key in stored if stream == path]
        in_order += in_stream == in_table
    return Tally(len(keys), len(expected - set(keys)), len(keys) - len(set(keys)), in_order)


def test_sigkill_loses_and_doubles_nothing(
    sync: SyncProcess, streams: Streams, postgres_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = [streams.create(f"s{n}") for n in range(STREAMS)]
    sync.start()
    seed = random.randrange(1_000_000)
    started = time.monotonic()
    killed_at = asyncio.run(produce_and_kill(streams, seed, EVENTS, KILLS, partial(kill_at, sync)))
    produced_in = time.monotonic() - started
    wait_until(lambda: sync.process is None or sync.ready(), timeout=30, what="last restart")
    wait_until(lambda: count_events(postgres_db) >= EVENTS, timeout=60, what="every event")
    wait_until(
        lambda: caught_up(streams, paths, postgres_db),
        timeout=60,
        what="every checkpoint at its stream's tail",
    )
    assert sync.stop() == 0

    found = tally(streams, paths, postgres_db, EVENTS)
    with capsys.disabled():
        print(
            f"\nkill test (seed {seed}): {PRODUCERS} producers wrote {EVENTS} events over "
            f"{STREAMS} streams in {produced_in:.1f}s; ds-sync SIGKILLed {len(killed_at)} times "
            f"(after {', '.join(map(str, killed_at))} events) and restarted; {found}"
        )
    assert len(killed_at) == KILLS
    assert found == Tally(EVENTS, 0, 0, STREAMS)

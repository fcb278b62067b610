"""``ds-bench sync``, Postgres → stream: commit → message readable on ``pg-items`` (native feed).

Writers make paced changes to ``items`` (inserts, updates and deletes, one
per transaction, on a fixed schedule) while a reader long-polls
``pg-items`` from its tail. Each change message carries its transaction's
commit time (``headers.timestamp``, the time Postgres recorded in the WAL);
the lag is the time the reader got the message minus that, on the same
clock. ds-sync runs as it ships, with the native feed.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from datetime import datetime
from typing import TYPE_CHECKING

import aiohttp
import httpx
import msgspec
import psycopg
from ds_schema.migrate import migrate

from ds_bench.sync_figures import LagFigures
from ds_bench.sync_stack import Window

if TYPE_CHECKING:
    from pathlib import Path

    from ds_bench.sync_stack import Stack

STREAM = "pg-items"
_WAIT_SECS = 300.0
_decode = msgspec.json.Decoder()


async def paced_changes(url: str, rate: float, seconds: float, workers: int = 16) -> int:
    """``rate`` changes a second for ``seconds``: 60 % inserts, 30 % updates, 10 % deletes,
    each its own transaction; the rows changed."""
    total = int(rate * seconds)
    rng = random.Random(7)
    ids: list[int] = []
    changed = 0
    queue: asyncio.Queue[int] = asyncio.Queue()
    for n in range(total):
        queue.put_nowait(n)
    start = time.perf_counter() + 0.2

    async def work() -> None:
        nonlocal changed
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            while not queue.empty():
                n = queue.get_nowait()
                delay = start + n / rate - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                roll = rng.random()
                if roll < 0.6 or len(ids) < 10:
                    cursor = await conn.execute(
                        "INSERT INTO items (title, body) VALUES (%s, %s) RETURNING id",
                        (f"bench {n}", "x" * 100),
                    )
                    row = await cursor.fetchone()
                    assert row is not None
                    ids.append(int(row[0]))
                    changed += 1
                elif roll < 0.9:
                    cursor = await conn.execute(
                        "UPDATE items SET title = %s WHERE id = %s", (f"edit {n}", rng.choice(ids))
                    )
                    changed += cursor.rowcount
                else:
                    victim = ids.pop(rng.randrange(len(ids)))
                    cursor = await conn.execute("DELETE FROM items WHERE id = %s", (victim,))
                    changed += cursor.rowcount

    await asyncio.gather(*(work() for _ in range(workers)))
    return changed


async def tail(
    stream_url: str, offset: str, lags: list[float], expected: list[int], done: asyncio.Event
) -> None:
    """Long-poll the stream from ``offset``; each change message's readable-minus-commit lag."""
    async with aiohttp.ClientSession() as session:
        while not (done.is_set() and len(lags) >= expected[0]):
            params = {"offset": offset, "live": "long-poll"}
            async with session.get(stream_url, params=params) as response:
                body = await response.read()
                readable = time.time()
                offset = response.headers.get("Stream-Next-Offset", offset)
            if response.status != 200:
                continue
            for message in _decode.decode(body):
                headers = message.get("headers", {})
                if "control" in headers:
                    continue
                committed = datetime.fromisoformat(headers["timestamp"]).timestamp()
                lags.append((readable - committed) * 1000)


def table_lag(
    stack: Stack, rate: float, seconds: float, profile: Path | None = None
) -> tuple[LagFigures, list[float]]:
    """Paced changes to ``items``; commit → readable lag of every change message."""
    database = stack.postgres.create_database("bench_" + uuid.uuid4().hex[:10])
    with psycopg.connect(database, autocommit=True) as conn:
        migrate(conn)
    stream_url = f"{stack.server.url}/v1/stream/{STREAM}"
    httpx.delete(stream_url)  # an earlier scenario's: each run starts on a new stream
    with stack.syncs(database, "bench-none/*", divided=False, tables="items") as sync:
        tail_offset = _wait_first_sync(stream_url)
        lags: list[float] = []

        async def run() -> int:
            expected, done = [1 << 62], asyncio.Event()
            reader = asyncio.ensure_future(tail(stream_url, tail_offset, lags, expected, done))
            changed = await paced_changes(database, rate, seconds)
            expected[0] = changed
            done.set()
            await asyncio.wait_for(reader, _WAIT_SECS)
            return changed

        with Window(sync, profile) as window:
            started = time.perf_counter()
            changed = asyncio.run(run())
            achieved = changed / (time.perf_counter() - started)
    figures = LagFigures.measured(
        f"Postgres → pg-items, {rate:,.0f} changes/s, native feed{stack.label}",
        lags,
        window,
        streams=1,
        carried=changed,
        rate=rate,
        achieved_rate=achieved,
    )
    return figures, lags


def _wait_first_sync(stream_url: str) -> str:
    """Wait for the table's first sync on the stream; the stream's tail after it."""
    deadline = time.monotonic() + _WAIT_SECS
    while time.monotonic() < deadline:
        response = httpx.get(stream_url, params={"offset": "-1"})
        if response.status_code == 200 and b"snapshot-end" in response.content:
            return response.headers["Stream-Next-Offset"]
        time.sleep(0.1)
    raise RuntimeError(f"{STREAM}: no first sync after {_WAIT_SECS:.0f}s")

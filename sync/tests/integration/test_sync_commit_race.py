"""Two ds-sync processes can never both commit a stream's reads.

Two writers on two connection pools (as two processes have) commit the very
same chain of reads at the same moment, a hundred times, against real
Postgres. The checkpoint compare-and-set lets exactly one apply each time;
the other is told its checkpoint was stale and writes nothing.
"""

from __future__ import annotations

import asyncio

import msgspec
import psycopg
from ds_schema.migrate import migrate
from ds_sync.metrics import Metrics
from ds_sync.sessions.model import Read, Status
from ds_sync.sessions.stream_state import Chain, StreamState
from ds_sync.sessions.writer import StaleCheckpoint, Writer
from psycopg_pool import AsyncConnectionPool
from sync_support import rows

ROUNDS = 100
STREAM = "race/s"


def _event(n: int) -> bytes:
    return msgspec.json.encode({"type": "message", "key": f"msg:{n}", "value": n})


async def _race(url: str) -> list[tuple[int, int]]:
    """Per round: how many of the two commits applied, and how many were refused as stale."""
    pools = [
        AsyncConnectionPool(url, min_size=1, max_size=2, kwargs={"autocommit": True}, open=False)
        for _ in range(2)
    ]
    for pool in pools:
        await pool.open()
    outcomes: list[BaseException | None] = []
    settled = asyncio.Event()

    def settle(_: Chain, error: BaseException | None) -> None:
        outcomes.append(error)
        if len(outcomes) % 2 == 0:
            settled.set()

    writers = [Writer(pool, Metrics(), max_rows=1000, interval=0, settle=settle) for pool in pools]
    results = []
    offset = 0
    try:
        for round_ in range(ROUNDS):
            start, offset = f"{offset:020d}", offset + 100
            reads = [Read(start, f"{offset:020d}", [_event(round_ * 2), _event(round_ * 2 + 1)])]
            # Each process has its own state of the stream, at the same checkpoint.
            states = [StreamState(STREAM, Status.ACTIVE, start, None) for _ in writers]
            settled.clear()
            for writer, state in zip(writers, states, strict=True):
                for read in reads:
                    state.queue(read)
                writer.submit(state)
            await asyncio.wait_for(settled.wait(), 30)
            pair = outcomes[-2:]
            applied = sum(1 for outcome in pair if outcome is None)
            stale = sum(1 for outcome in pair if isinstance(outcome, StaleCheckpoint))
            results.append((applied, stale))
    finally:
        for writer in writers:
            await writer.stop()
        for pool in pools:
            await pool.close()
    return results


def test_two_processes_committing_the_same_reads_apply_them_once(postgres_db: str) -> None:
    with psycopg.connect(postgres_db, autocommit=True) as conn:
        migrate(conn)
        conn.execute(
            "INSERT INTO sync_checkpoints (stream_name, next_offset) VALUES (%s, %s)",
            (STREAM, "0" * 20),
        )
    results = asyncio.run(_race(postgres_db))
    assert results == [(1, 1)] * ROUNDS
    stored = rows(
        postgres_db,
        "SELECT event_key, count(*) FROM session_events GROUP BY event_key HAVING count(*) > 1",
    )
    assert stored == []
    assert rows(postgres_db, "SELECT count(*) FROM session_events")[0][0] == 2 * ROUNDS
    checkpoint = rows(postgres_db, "SELECT next_offset FROM sync_checkpoints")[0][0]
    assert checkpoint == f"{ROUNDS * 100:020d}"

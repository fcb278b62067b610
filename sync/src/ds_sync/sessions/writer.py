"""Committing reads: rows into ``session_events`` and the checkpoint moves, in one transaction
per tick for every stream.

Readers hand their reads to their stream's state and go on reading; each
stream with reads queued is submitted here. Once per ``interval`` (sooner
when a full statement's worth of rows waits) the writer takes every queued
chain of reads, from any number of streams, and commits them together in
one statement on one connection: group commit, so a hundred streams with a
message each cost one transaction, not a hundred, and a quiet minute costs
nothing. A stream has at most one chain in a transaction at a time, so its
rows commit in stream order.

Every checkpoint move is a compare-and-set (``WHERE next_offset = <where
the chain began>``): a chain applies only on top of exactly the rows it
follows, so even two ds-sync processes on one database cannot insert a
message twice: the row lock makes the second wait for the first, and its
condition no longer holds when it gets the row. The unique key on
(stream_name, ds_offset, event_index) is the second guard; it must never
fire, and when it does the stream stops with an error instead of skipping
rows.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any

import psycopg
from durable_sessions.sessions.fields import fields_of_json
from psycopg import errors as pg_errors

from ds_sync.sessions.model import Status
from ds_sync.sessions.pg_arrays import int_array, text_array

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable
    from datetime import datetime

    from psycopg import AsyncConnection
    from psycopg_pool import AsyncConnectionPool

    from ds_sync.metrics import Metrics
    from ds_sync.sessions.model import Read
    from ds_sync.sessions.read_ticks import ReadTicks
    from ds_sync.sessions.stream_state import Chain, StreamState

log = logging.getLogger("ds_sync.writer")

# One statement, so one round trip and one implicit transaction (the pool's
# connections are in autocommit mode): move every checkpoint whose stored
# offset is where its chain began, then insert the rows (and gaps) of exactly
# those streams. A stale stream gets neither; the others commit. Each array
# is one literal (``pg_arrays``).
_COMMIT = """
WITH moved AS (
    UPDATE sync_checkpoints AS c
    SET next_offset = m.next_offset, status = m.status, detail = NULL, updated_at = now()
    FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[])
        AS m(stream_name, expected, next_offset, status)
    WHERE c.stream_name = m.stream_name AND c.next_offset = m.expected AND c.status = 'active'
    RETURNING c.stream_name
), inserted AS (
    INSERT INTO session_events (stream_name, ds_offset, event_index, event_key, event_type,
        operation, event_time, payload)
    SELECT r.stream_name, r.ds_offset, r.event_index, r.event_key, r.event_type, r.operation,
        r.event_time, r.payload::jsonb
    FROM unnest(%s::text[], %s::text[], %s::int4[], %s::text[], %s::text[], %s::text[],
        %s::timestamptz[], %s::text[])
        AS r(stream_name, ds_offset, event_index, event_key, event_type, operation, event_time,
            payload)
    WHERE r.stream_name IN (SELECT stream_name FROM moved)
), gaps AS (
    INSERT INTO sync_gaps (stream_name, from_offset, to_offset, detail)
    SELECT g.stream_name, g.from_offset, g.to_offset, %s
    FROM unnest(%s::text[], %s::text[], %s::text[]) AS g(stream_name, from_offset, to_offset)
    WHERE g.stream_name IN (SELECT stream_name FROM moved)
)
SELECT stream_name FROM moved
"""
_GAP_DETAIL = "history dropped by a snapshot before it was synced (410)"
# The fallback for a batch holding a message jsonb refuses: row by row.
_INSERT_ONE = (
    "INSERT INTO session_events (stream_name, ds_offset, event_index, event_key, event_type, "
    "operation, event_time, payload) VALUES (%s, %s, %s, %s, %s, %s, %s, {payload})"
)
_MOVE_ONE = (
    "UPDATE sync_checkpoints SET next_offset = %s, status = %s, detail = NULL, updated_at = now() "
    "WHERE stream_name = %s AND next_offset = %s AND status = 'active'"
)
_GAP_ONE = (
    "INSERT INTO sync_gaps (stream_name, from_offset, to_offset, detail) VALUES (%s, %s, %s, %s)"
)


class StaleCheckpoint(Exception):
    """The stream's checkpoint is not where the chain began: reload it and read on from there."""


class UniqueConflict(Exception):
    """Rows at the chain's positions exist already: the stream stops (never skipped silently)."""


class Writer:
    """Group commit of every stream's queued reads, once per tick, over one connection."""

    def __init__(
        self,
        pool: AsyncConnectionPool,
        metrics: Metrics,
        *,
        max_rows: int,
        interval: float,
        settle: Callable[[Chain, BaseException | None], None],
        owns: Callable[[StreamState], bool] = lambda _: True,
        ticks: ReadTicks | None = None,
    ) -> None:
        self._pool = pool
        self._owns = owns
        self._ticks = ticks
        self._conn: AsyncConnection[Any] | None = None  # the writer's own, taken from the pool
        self._metrics = metrics
        self._max_rows = max_rows
        self._interval = interval
        self._settle = settle
        self._submitted: dict[StreamState, None] = {}  # streams with reads queued, in order
        self._work = asyncio.Event()
        self._stopping = False
        self._last_start = 0.0
        self._task = asyncio.create_task(self._run(), name="writer")

    def submit(self, state: StreamState) -> None:
        """``state`` has reads queued: commit them with the next transaction."""
        self._submitted[state] = None
        self._work.set()

    async def stop(self) -> None:
        """Finish the transaction in progress and stop (queued reads are read again later)."""
        self._stopping = True
        self._work.set()
        await asyncio.gather(self._task, return_exceptions=True)
        await self._give_back()

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[AsyncConnection[Any]]:
        """The writer's connection: kept between ticks (no pool round per commit), handed
        back to the pool after a connection error so a fresh one is taken next time."""
        if self._conn is None:
            self._conn = await self._pool.getconn()
        try:
            yield self._conn
        except psycopg.OperationalError:
            await self._give_back()
            raise

    async def _give_back(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await self._pool.putconn(conn)

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        ticks = self._ticks
        while not self._stopped():
            # Readers held for the tick (read_ticks): tick without being asked.
            if ticks is None or not ticks.holding:
                await self._work.wait()
            self._work.clear()
            # One transaction per tick; a backlog worth a full statement doesn't wait.
            wait = self._last_start + self._interval - loop.time()
            if wait > 0 and self._queued_rows() < self._max_rows:
                await asyncio.sleep(wait)
            if self._stopped():
                return
            if ticks is not None and ticks.holding:
                # The next window an interval on, whatever it brings. A quiet window ends
                # the holding, unless this tick has reads to commit anyway (the ones
                # that were just held: their streams get a window of their own next).
                self._last_start = loop.time()
                await ticks.window(release_if_quiet=not self._submitted)
                if self._stopped():
                    return
            chains = self._take()
            if not chains:
                continue
            if log.isEnabledFor(logging.DEBUG):
                moves = ", ".join(f"{c.stream}->{c.next_offset}" for c in chains)
                log.debug("committing %s", moves)
            self._last_start = loop.time()
            await self._apply(chains)
            if self._submitted:
                self._work.set()

    def _stopped(self) -> bool:
        return self._stopping

    def _queued_rows(self) -> int:
        return sum(state.queued_rows for state in self._submitted)

    def _take(self) -> list[Chain]:
        """Every submitted stream's queued reads, up to ``max_rows`` rows in all (at least one
        chain); streams with a chain still in a transaction wait for the next tick."""
        chains: list[Chain] = []
        rows = 0
        for state in list(self._submitted):
            if state.committing is not None:
                continue
            if not self._owns(state):
                # Its shard's lease is gone (or overdue): another process commits it now.
                state.drop_reads()
                del self._submitted[state]
                continue
            budget = self._max_rows - rows
            if chains and budget <= 0:
                break
            chain = state.take(max(budget, 1))
            if chain is not None:
                chains.append(chain)
                rows += chain.rows
            if not state.queued:
                del self._submitted[state]
        return chains

    async def _apply(self, chains: list[Chain]) -> None:
        try:
            stale = await self._transaction(chains)
        except (pg_errors.UniqueViolation, psycopg.DataError) as exc:
            # Find the chain that caused it: each on its own.
            if len(chains) > 1:
                for chain in chains:
                    await self._apply([chain])
                return
            await self._apply_alone(chains[0], exc)
            return
        except psycopg.Error as exc:
            self._metrics.database_errors += 1
            for chain in chains:
                self._settle(chain, exc)
            return
        self._count([chain for chain in chains if chain.stream not in stale])
        for chain in chains:
            self._settle(chain, StaleCheckpoint(chain.stream) if chain.stream in stale else None)

    def _count(self, chains: list[Chain]) -> None:
        reads = [read for chain in chains for read in chain.reads]
        self._metrics.committed(group_size=len(reads), rows=sum(len(r.messages) for r in reads))
        self._metrics.gaps += sum(1 for read in reads if read.gap_from is not None)

    async def _apply_alone(self, chain: Chain, exc: psycopg.Error) -> None:
        if isinstance(exc, pg_errors.UniqueViolation):
            self._settle(chain, UniqueConflict(str(exc).splitlines()[0]))
            return
        # jsonb refuses some valid JSON (\u0000, unpaired surrogates, huge numbers):
        # insert row by row, storing what it refuses as its text in a JSON string.
        try:
            applied = await self._transaction_rows(chain)
        except pg_errors.UniqueViolation as again:
            self._settle(chain, UniqueConflict(str(again).splitlines()[0]))
            return
        except psycopg.Error as again:
            self._metrics.database_errors += 1
            self._settle(chain, again)
            return
        if not applied:
            self._settle(chain, StaleCheckpoint(chain.stream))
        else:
            self._count([chain])
            self._settle(chain, None)

    async def _transaction(self, chains: list[Chain]) -> set[str]:
        """Commit the chains in one statement; the streams whose checkpoint was stale."""
        streams: list[str] = []
        offsets: list[str] = []
        indexes: list[int] = []
        keys: list[str | None] = []
        types: list[str | None] = []
        operations: list[str | None] = []
        times: list[str | None] = []
        payloads: list[str] = []
        # Per chain, its newest event's own time: the lag once committed.
        newest: list[datetime | None] = []
        gaps: list[tuple[str, str, str]] = []
        for chain in chains:
            event_time = None
            stream = chain.stream
            for read in chain.reads:
                if read.gap_from is not None:
                    gaps.append((stream, read.gap_from, read.start))
                count = len(read.messages)
                streams += [stream] * count
                offsets += [read.start] * count
                indexes += range(count)
                for raw in read.messages:
                    fields = fields_of_json(raw)
                    keys.append(fields.key)
                    types.append(fields.type)
                    operations.append(fields.operation)
                    if fields.time is None:
                        times.append(None)
                    else:
                        event_time = fields.time
                        times.append(event_time.isoformat())
                    payloads.append(raw.decode("utf-8"))
            newest.append(event_time)
        params = (
            text_array(c.stream for c in chains),
            text_array(c.begins_at for c in chains),
            text_array(c.next_offset for c in chains),
            text_array(_status(c).value for c in chains),
            text_array(streams),
            text_array(offsets),
            int_array(indexes),
            text_array(keys),
            text_array(types),
            text_array(operations),
            text_array(times),
            text_array(payloads),
            _GAP_DETAIL,
            text_array(g[0] for g in gaps),
            text_array(g[1] for g in gaps),
            text_array(g[2] for g in gaps),
        )
        async with self._connection() as conn:
            cursor = await conn.execute(_COMMIT, params)
            moved = {row[0] for row in await cursor.fetchall()}
        now = time.time()
        for chain, newest_time in zip(chains, newest, strict=True):
            if newest_time is not None and chain.stream in moved:
                self._metrics.observe_lag("stream_to_postgres", now - newest_time.timestamp())
        return {c.stream for c in chains} - moved

    async def _transaction_rows(self, chain: Chain) -> bool:
        """Commit one chain row by row (jsonb refused a message); False when stale."""
        async with self._connection() as conn, conn.transaction():
            cursor = await conn.execute(
                _MOVE_ONE,
                (chain.next_offset, _status(chain).value, chain.stream, chain.begins_at),
            )
            if cursor.rowcount != 1:
                return False  # nothing was written
            for read in chain.reads:
                if read.gap_from is not None:
                    await conn.execute(
                        _GAP_ONE, (chain.stream, read.gap_from, read.start, _GAP_DETAIL)
                    )
                await self._insert_rows(conn, chain.stream, read)
        return True

    async def _insert_rows(self, conn: AsyncConnection[object], stream: str, read: Read) -> None:
        for index, raw in enumerate(read.messages):
            fields = fields_of_json(raw)
            text = raw.decode("utf-8")
            values = (
                stream,
                read.start,
                index,
                fields.key,
                fields.type,
                fields.operation,
                fields.time,
                text,
            )
            try:
                async with conn.transaction():
                    await conn.execute(_INSERT_ONE.format(payload="%s::jsonb"), values)
            except psycopg.DataError as exc:
                await conn.execute(_INSERT_ONE.format(payload="to_jsonb(%s::text)"), values)
                self._metrics.unstorable_payloads += 1
                log.error(
                    "stream %s offset %s message %d: jsonb refuses it (%s); stored as its text",
                    stream,
                    read.start,
                    index,
                    str(exc).splitlines()[0],
                )


def _status(chain: Chain) -> Status:
    return Status.DONE if chain.closed else Status.ACTIVE

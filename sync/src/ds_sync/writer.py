"""Committing batches: rows into ``session_events`` and the checkpoint move, in one transaction.

Readers hand batches to ``Writer.commit`` and wait. A few writer tasks, one
pooled connection each, take whatever is queued, up to ``max_rows``, and
commit it together: group commit, so a hundred streams with a message each
cost one transaction, not a hundred. Each stream's batches stay in order
because its reader waits for one commit before sending the next batch.

Every checkpoint move is a compare-and-set (``WHERE next_offset = <where
the batch began>``): a batch applies only on top of exactly the rows it
follows, so even two ds-sync processes on one database cannot insert a
message twice. The unique key on (stream_name, ds_offset, event_index) is
the second guard; it must never fire, and when it does the stream stops
with an error instead of skipping rows.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import psycopg
from psycopg import errors as pg_errors

from ds_sync.events import extract_raw
from ds_sync.model import Status

if TYPE_CHECKING:
    from datetime import datetime

    from psycopg import AsyncConnection
    from psycopg_pool import AsyncConnectionPool

    from ds_sync.metrics import Metrics
    from ds_sync.model import Batch

log = logging.getLogger("ds_sync.writer")

# One statement, so one round trip and one implicit transaction (the pool's
# connections are in autocommit mode): move every checkpoint whose stored
# offset is where its batch began, then insert the rows (and gaps) of exactly
# those streams. A stale stream gets neither; the others commit.
_COMMIT = """
WITH moved AS (
    UPDATE sync_checkpoints AS c
    SET next_offset = m.next_offset, status = m.status, detail = NULL, updated_at = now()
    FROM unnest(%b::text[], %b::text[], %b::text[], %b::text[])
        AS m(stream_name, expected, next_offset, status)
    WHERE c.stream_name = m.stream_name AND c.next_offset = m.expected AND c.status = 'active'
    RETURNING c.stream_name
), inserted AS (
    INSERT INTO session_events (stream_name, ds_offset, event_index, event_key, event_type,
        operation, event_time, payload)
    SELECT r.stream_name, r.ds_offset, r.event_index, r.event_key, r.event_type, r.operation,
        r.event_time, r.payload::jsonb
    FROM unnest(%b::text[], %b::text[], %b::int4[], %b::text[], %b::text[], %b::text[],
        %b::timestamptz[], %b::text[])
        AS r(stream_name, ds_offset, event_index, event_key, event_type, operation, event_time,
            payload)
    WHERE r.stream_name IN (SELECT stream_name FROM moved)
), gaps AS (
    INSERT INTO sync_gaps (stream_name, from_offset, to_offset, detail)
    SELECT g.stream_name, g.from_offset, g.to_offset, %b
    FROM unnest(%b::text[], %b::text[], %b::text[]) AS g(stream_name, from_offset, to_offset)
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
    """The stream's checkpoint is not where the batch began: reload it and read on from there."""


class UniqueConflict(Exception):
    """Rows at the batch's positions exist already: the stream stops (never skipped silently)."""


class WriterStopped(Exception):
    """The writer shut down before this batch was committed (it will be read again)."""


@dataclass(slots=True, eq=False)
class _Job:
    batch: Batch
    done: asyncio.Future[None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class Writer:
    """Group commit of batches over a connection pool."""

    def __init__(
        self, pool: AsyncConnectionPool, metrics: Metrics, *, tasks: int, max_rows: int
    ) -> None:
        self._pool = pool
        self._metrics = metrics
        self._queue: list[_Job] = []
        self._ready = asyncio.Event()
        self._max_rows = max_rows
        self._stopping = False
        self._workers = [
            asyncio.create_task(self._work(), name=f"writer-{n}") for n in range(tasks)
        ]

    async def commit(self, batch: Batch) -> None:
        """Return once the batch is committed; raises StaleCheckpoint, UniqueConflict,
        WriterStopped or a psycopg error (the batch was not applied)."""
        if self._stopping:
            raise WriterStopped()
        job = _Job(batch)
        self._queue.append(job)
        self._ready.set()
        await job.done

    async def stop(self) -> None:
        """Finish the transactions in progress, fail what is still queued, stop."""
        self._stopping = True
        self._ready.set()
        await asyncio.gather(*self._workers, return_exceptions=True)
        for job in self._queue:
            _settle(job, WriterStopped())
        self._queue.clear()

    async def _work(self) -> None:
        while True:
            await self._ready.wait()
            if self._stopping:
                return
            group = self._take()
            if not group:
                self._ready.clear()
                continue
            await self._apply(group)

    def _take(self) -> list[_Job]:
        """Queued jobs up to max_rows (at least one), skipping those whose reader gave up."""
        group: list[_Job] = []
        rows = 0
        while self._queue and (
            not group or rows + len(self._queue[0].batch.messages) <= self._max_rows
        ):
            job = self._queue.pop(0)
            if job.done.done():
                continue
            group.append(job)
            rows += len(job.batch.messages)
        return group

    async def _apply(self, group: list[_Job]) -> None:
        try:
            stale = await self._transaction(group)
        except (pg_errors.UniqueViolation, psycopg.DataError) as exc:
            # Find the batch that caused it: each on its own.
            if len(group) > 1:
                for job in group:
                    await self._apply([job])
                return
            await self._apply_alone(group[0], exc)
            return
        except psycopg.Error as exc:
            self._metrics.database_errors += 1
            for job in group:
                _settle(job, exc)
            return
        applied = [job for job in group if job.batch.stream not in stale]
        self._count(applied)
        for job in group:
            _settle(job, StaleCheckpoint(job.batch.stream) if job.batch.stream in stale else None)

    def _count(self, group: list[_Job]) -> None:
        batches = [job.batch for job in group]
        self._metrics.committed(group_size=len(batches), rows=sum(len(b.messages) for b in batches))
        self._metrics.gaps += sum(1 for b in batches if b.gap_from is not None)

    async def _apply_alone(self, job: _Job, exc: psycopg.Error) -> None:
        if isinstance(exc, pg_errors.UniqueViolation):
            _settle(job, UniqueConflict(str(exc).splitlines()[0]))
            return
        # jsonb refuses some valid JSON (\u0000, unpaired surrogates, huge numbers):
        # insert row by row, storing what it refuses as its text in a JSON string.
        try:
            applied = await self._transaction_rows(job.batch)
        except pg_errors.UniqueViolation as again:
            _settle(job, UniqueConflict(str(again).splitlines()[0]))
            return
        except psycopg.Error as again:
            self._metrics.database_errors += 1
            _settle(job, again)
            return
        if not applied:
            _settle(job, StaleCheckpoint(job.batch.stream))
        else:
            self._count([job])
            _settle(job, None)

    async def _transaction(self, group: list[_Job]) -> set[str]:
        """Commit the group in one statement; the streams whose checkpoint was stale."""
        batches = [job.batch for job in group]
        rows: list[list[object]] = [[], [], [], [], [], [], [], []]
        # Per batch, its newest event's own time: the lag once committed.
        newest: list[datetime | None] = []
        for batch in batches:
            event_time = None
            for index, raw in enumerate(batch.messages):
                fields = extract_raw(raw)
                event_time = fields.event_time or event_time
                rows[0].append(batch.stream)
                rows[1].append(batch.start)
                rows[2].append(index)
                rows[3].append(fields.event_key)
                rows[4].append(fields.event_type)
                rows[5].append(fields.operation)
                rows[6].append(fields.event_time)
                rows[7].append(raw.decode("utf-8"))
            newest.append(event_time)
        gapped = [b for b in batches if b.gap_from is not None]
        params: list[object] = [
            [b.stream for b in batches],
            [b.gap_from or b.start for b in batches],
            [b.next_offset for b in batches],
            [_status(b).value for b in batches],
            *rows,
            _GAP_DETAIL,
            [b.stream for b in gapped],
            [b.gap_from for b in gapped],
            [b.start for b in gapped],
        ]
        async with self._pool.connection() as conn:
            cursor = await conn.execute(_COMMIT, params)
            moved = {row[0] for row in await cursor.fetchall()}
        now = time.time()
        for batch, event_time in zip(batches, newest, strict=True):
            if event_time is not None and batch.stream in moved:
                self._metrics.observe_lag("stream_to_postgres", now - event_time.timestamp())
        return {b.stream for b in batches} - moved

    async def _transaction_rows(self, batch: Batch) -> bool:
        """Commit one batch row by row (jsonb refused a message); False when stale."""
        async with self._pool.connection() as conn, conn.transaction():
            cursor = await conn.execute(
                _MOVE_ONE,
                (
                    batch.next_offset,
                    _status(batch).value,
                    batch.stream,
                    batch.gap_from or batch.start,
                ),
            )
            if cursor.rowcount != 1:
                return False  # nothing was written
            if batch.gap_from is not None:
                await conn.execute(
                    _GAP_ONE, (batch.stream, batch.gap_from, batch.start, _GAP_DETAIL)
                )
            await self._insert_rows(conn, batch)
        return True

    async def _insert_rows(self, conn: AsyncConnection[object], batch: Batch) -> None:
        for index, raw in enumerate(batch.messages):
            fields = extract_raw(raw)
            text = raw.decode("utf-8")
            values = (
                batch.stream,
                batch.start,
                index,
                fields.event_key,
                fields.event_type,
                fields.operation,
                fields.event_time,
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
                    batch.stream,
                    batch.start,
                    index,
                    str(exc).splitlines()[0],
                )


def _status(batch: Batch) -> Status:
    return Status.DONE if batch.closed else Status.ACTIVE


def _settle(job: _Job, error: BaseException | None) -> None:
    if job.done.done():
        return
    if error is None:
        job.done.set_result(None)
    else:
        job.done.set_exception(error)
    # A reader that stopped waiting never retrieves it; don't warn about that.
    with contextlib.suppress(BaseException):
        job.done.exception()

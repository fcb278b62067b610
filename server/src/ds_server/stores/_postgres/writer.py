"""The writer thread: queued mutations committed together on one connection (group commit).

Callers on the event loop ``append`` a commit or ``submit`` a mutation and
get a future. A thread of its own takes everything queued, runs it in ONE
transaction and resolves the futures once ``COMMIT`` returned
(``synchronous_commit=on``: the WAL is flushed), so concurrent writers, on
any streams, share one flush. A thread (with a blocking connection, which
releases the GIL while it waits) rather than a task: a batch's round trips
then never wait for the event loop, which is busy with requests exactly when
many writers share a batch.

Appends are fenced: a stream's appends in a batch are merged into one call
of ``ds_append``, which stores them only if the stored version is the one
the first was decided on (``AppendCommit.version - 1``); otherwise all of
them fail with ``StaleStream``, and other streams' appends in the batch
still commit. Likewise if their bucket's stored totals have no room for them
(``QuotaRefused``: another process filled it). Later appends of a stream
whose write failed were decided on top of it, so they fail too, until the
engine decides again on a state it rewound or reloaded (``reset``). The
calls of a batch are pipelined: a batch costs a few round trips, whatever
its size. Every change is announced with ``pg_notify`` in its transaction
(see ``feed``).

A transaction first locks the ``bucket_usage`` rows of every bucket its
writes count in, in bucket order (the rows are made beforehand, each in a
transaction of its own): so two processes' batches that touch the same
buckets wait for each other instead of deadlocking, and a bucket's quota is
checked against totals no other transaction can change before ``COMMIT``.

If a transaction fails for another reason, it is rolled back and each
mutation is retried alone, so exactly the ones that cannot be stored fail
and nothing is half-written. A connection lost before ``COMMIT`` is
reopened and the batch run again; one lost during ``COMMIT`` (the outcome is
unknown) fails its batch with ``StorageUnavailable``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import psycopg
from psycopg import errors as pg_errors

from ds_server.metrics.recorder import observe_commit
from ds_server.postgres_database import WRITER
from ds_server.stores._postgres import chunks, feed
from ds_server.stores.errors import (
    PayloadTooLarge,
    QuotaRefused,
    StaleStream,
    StorageFull,
    StorageUnavailable,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from ds_server.postgres_database import PostgresDatabase
    from ds_server.stores._commit import AppendCommit

T = TypeVar("T")
Conn = psycopg.Connection[Any]

log = logging.getLogger("ds_server.postgres")

# Enough to amortize a WAL flush over many writers, small enough to keep latency flat.
_MAX_BATCH = 512
# A batch holds its bytes in memory until COMMIT: large appends go a few at a time.
_MAX_BATCH_BYTES = 16 * 1024 * 1024

_APPEND = """
    SELECT ds_append(%s, %s, %s, %s, %s, %s, %s, %s,
        %s::bigint[], %s::boolean[], %s::bytea[], %s::text[], %s::bigint[], %s::bigint[],
        %s::text[], %s::text[], %s, %s, %s, %s, %s, %s)
"""
_MAKE_USAGE_ROWS = """
    INSERT INTO bucket_usage (bucket) SELECT unnest(%s::text[]) ORDER BY 1
    ON CONFLICT (bucket) DO NOTHING
"""
_LOCK_USAGE_ROWS = """
    SELECT bucket FROM bucket_usage WHERE bucket = ANY(%s::text[]) ORDER BY bucket FOR UPDATE
"""
# ``ds_append``'s answers.
_STORED, _STALE = 0, 1


@dataclass(slots=True)
class WriterStats:
    """Counters for tests, benchmarks and metrics."""

    transactions: int = 0  # committed write transactions
    mutations: int = 0  # mutations (appends included) committed in them
    stale: int = 0  # appends refused as decided on an outdated state (or over quota)
    over_quota: int = 0  # appends refused by their bucket's stored totals


@dataclass(slots=True)
class _Job:
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Any] | None
    commit: AppendCommit | None = None
    work: Callable[[Conn], Any] | None = None
    # A stream the engine decides afresh (see ``Writer.reset``).
    reset: str | None = None
    # The buckets whose totals ``work`` changes.
    buckets: tuple[str, ...] = ()

    def counted_in(self) -> tuple[str, ...]:
        """The buckets whose totals the job changes."""
        commit = self.commit
        if commit is not None:
            return () if commit.usage is None else (commit.usage.bucket,)
        return self.buckets


def storage_error(error: Exception) -> Exception:
    """The domain error for a failed database call (the error itself if none fits)."""
    if isinstance(error, pg_errors.DiskFull):
        return StorageFull("storage is full; nothing was written")
    if isinstance(error, pg_errors.ProgramLimitExceeded):
        return PayloadTooLarge("payload exceeds what the database can store")
    if isinstance(error, pg_errors.UniqueViolation):
        # Another process stored the same stream (or bucket) first.
        return StaleStream()
    if isinstance(error, psycopg.OperationalError):
        return StorageUnavailable()
    return error


def _params(commits: list[AppendCommit]) -> tuple[object, ...]:
    """One ``ds_append`` call for a stream's consecutive commits (in order)."""
    first, last = commits[0], commits[-1]
    starts: list[int] = []
    conts: list[bool] = []
    datas: list[bytes] = []
    for commit in commits:
        s, c, d = chunks.pieces(commit.start, commit.messages)
        starts += s
        conts += c
        datas += d
    has_data = any(commit.messages for commit in commits)
    last_write = max((c.last_access for c in commits if c.messages), default=last.last_access)
    # Producer and Stream-Seq claims: the last of each name wins, as applied in order.
    producers = {c.producer.producer_id: c.producer for c in commits if c.producer is not None}
    seqs = {c.writer: c.stream_seq for c in commits if c.stream_seq is not None}
    closing = next((c for c in commits if c.close), None)
    closer = closing.producer if closing is not None else None
    usage = last.usage
    return (
        first.stream_id,
        first.version,
        last.version,
        first.start,
        last.start + last.size,
        has_data,
        last.last_access,
        last_write,
        starts,
        conts,
        datas,
        [p.producer_id for p in producers.values()],
        [p.epoch for p in producers.values()],
        [p.seq for p in producers.values()],
        list(seqs),
        list(seqs.values()),
        closing is not None,
        closer.producer_id if closer else None,
        closer.epoch if closer else None,
        closer.seq if closer else None,
        usage.bucket if usage is not None else None,
        usage.quota.max_bytes if usage is not None else None,
    )


class Writer:
    """Owns the write connection and its thread; every mutation goes through it, in order."""

    def __init__(self, database: PostgresDatabase, channel: str, origin: str) -> None:
        self._database = database
        self._channel = channel
        self._origin = origin
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._conn: Conn | None = None
        self._thread: threading.Thread | None = None
        # Only the thread reads or writes these two.
        # stream_id -> the last version of an append that failed: later ones build on it.
        self._broken: dict[str, int] = {}
        self._committing = False
        # Buckets whose ``bucket_usage`` row exists (rows are never deleted).
        self._usage_rows: set[str] = set()
        self.stats = WriterStats()

    async def start(self) -> None:
        self._conn = await asyncio.to_thread(self._connect)
        self._thread = threading.Thread(target=self._run, name="ds-postgres-writer", daemon=True)
        self._thread.start()

    def _connect(self) -> Conn:
        return self._database.connect_blocking(WRITER)

    def append(self, commit: AppendCommit) -> asyncio.Future[None]:
        """Queue an append; the future resolves once it is committed."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        self._queue.put(_Job(loop, future, commit=commit))
        return future

    def submit(self, work: Callable[[Conn], T], buckets: tuple[str, ...] = ()) -> asyncio.Future[T]:
        """Queue ``work`` (run inside the batch's transaction); resolves once committed.

        ``buckets``: those whose ``bucket_usage`` rows ``work`` reads or
        changes; they are locked before it runs.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._queue.put(_Job(loop, future, work=work, buckets=buckets))
        return future

    def reset(self, stream_id: str) -> None:
        """The engine decides the stream's writes afresh from here on (it reloaded the state)."""
        # Through the queue: it applies after what was queued before it.
        self._queue.put(_Job(asyncio.get_running_loop(), None, reset=stream_id))

    async def stop(self) -> None:
        """Commit what is queued, then close the connection."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(None)
            await asyncio.to_thread(thread.join)

    # -- the thread -----------------------------------------------------------

    def _run(self) -> None:
        try:
            stopping = False
            while not stopping:
                first = self._queue.get()
                if first is None:
                    return
                batch = [first]
                size = _size(first)
                while len(batch) < _MAX_BATCH and size < _MAX_BATCH_BYTES:
                    try:
                        job = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if job is None:
                        stopping = True
                        break
                    batch.append(job)
                    size += _size(job)
                try:
                    self._commit(batch)
                except Exception as error:
                    # The writer must outlive any one batch, or every later write would hang.
                    log.exception("postgres writer: a batch failed unexpectedly")
                    self._fail(batch, error)
        finally:
            if self._conn is not None:
                with contextlib.suppress(psycopg.Error):
                    self._conn.close()

    def _commit(self, batch: list[_Job]) -> None:
        live = [job for job in batch if not self._refused(job)]
        if not live:
            return
        started = time.perf_counter()
        try:
            results = self._attempt(live)
        except Exception as error:
            if isinstance(error, psycopg.OperationalError) or len(live) == 1:
                self._fail(live, storage_error(error))
            else:
                for job in live:
                    self._commit([job])
            return
        observe_commit(time.perf_counter() - started, len(live))
        for job, result in zip(live, results, strict=True):
            _settle(job, result)

    def _refused(self, job: _Job) -> bool:
        """Apply a reset, or fail an append decided on top of a failed one; True if either."""
        if job.reset is not None:
            self._broken.pop(job.reset, None)
            return True
        commit = job.commit
        if commit is None:
            return False
        failed = self._broken.get(commit.stream_id)
        if failed is None:
            return False
        if commit.version <= failed:
            # Decided again on the rewound state: the chain is whole again.
            del self._broken[commit.stream_id]
            return False
        self.stats.stale += 1
        _settle(job, StaleStream())
        return True

    def _attempt(self, batch: list[_Job]) -> list[Any]:
        """Run ``batch`` in one transaction; on a new connection if the first was lost.

        Retried only if the connection failed before ``COMMIT`` was sent:
        then nothing of the batch was stored. A connection lost during
        ``COMMIT`` leaves the outcome unknown, and the batch fails.
        """
        for attempt in range(2):
            conn = self._connection()
            self._committing = False
            try:
                return self._transaction(conn, batch)
            except psycopg.OperationalError:
                if self._committing or attempt == 1:
                    raise
                log.warning("database connection lost; running the writes again on a new one")
        raise AssertionError("unreachable")

    def _connection(self) -> Conn:
        conn = self._conn
        if conn is None or conn.closed or conn.broken:
            if conn is not None:
                with contextlib.suppress(psycopg.Error):
                    conn.close()
            self._conn = conn = self._connect()
        return conn

    def _transaction(self, conn: Conn, batch: list[_Job]) -> list[Any]:
        """Run ``batch`` in one transaction; each job's result or StaleStream."""
        results: list[Any] = [None] * len(batch)
        appended: list[str] = []
        buckets = sorted({bucket for job in batch for bucket in job.counted_in()})
        if buckets:
            self._make_usage_rows(conn, buckets)
        with conn.transaction():
            if buckets:
                conn.execute(_LOCK_USAGE_ROWS, (buckets,))
            i = 0
            while i < len(batch):
                if batch[i].commit is None:
                    # Announce the appends before what follows them (a purge, say).
                    feed.notify_appends(conn, self._channel, self._origin, appended)
                    appended = []
                    work = batch[i].work
                    assert work is not None
                    results[i] = work(conn)
                    i += 1
                    continue
                j = i
                while j < len(batch) and batch[j].commit is not None:
                    j += 1
                appended += self._appends(conn, batch, i, j, results)
                i = j
            feed.notify_appends(conn, self._channel, self._origin, appended)
            self._committing = True  # leaving the block sends COMMIT
        self.stats.transactions += 1
        self.stats.mutations += sum(1 for r in results if not isinstance(r, StaleStream))
        return results

    def _make_usage_rows(self, conn: Conn, buckets: list[str]) -> None:
        """Make the missing ``bucket_usage`` rows, committed before any is locked."""
        missing = [bucket for bucket in buckets if bucket not in self._usage_rows]
        if missing:
            # Autocommit: no lock of it is held while the batch waits for others'.
            conn.execute(_MAKE_USAGE_ROWS, (missing,))
            self._usage_rows.update(missing)

    def _appends(
        self, conn: Conn, batch: list[_Job], i: int, j: int, results: list[Any]
    ) -> list[str]:
        """Store the appends ``batch[i:j]``, one fenced call per stream; the streams stored."""
        # A stream's appends, in order, each group a chain of consecutive versions.
        groups: list[list[AppendCommit]] = []
        indexes: list[list[int]] = []
        open_group: dict[str, int] = {}
        for k in range(i, j):
            commit = batch[k].commit
            assert commit is not None
            at = open_group.get(commit.stream_id)
            if at is None or groups[at][-1].version != commit.version - 1:
                open_group[commit.stream_id] = at = len(groups)
                groups.append([])
                indexes.append([])
            groups[at].append(commit)
            indexes[at].append(k)
        stored: list[str] = []
        with conn.cursor() as cursor:
            cursor.executemany(_APPEND, [_params(group) for group in groups], returning=True)
            for group, ks in zip(groups, indexes, strict=True):
                row = cursor.fetchone()
                stream_id = group[0].stream_id
                answer = row[0] if row is not None else _STALE
                if answer == _STORED:
                    stored.append(stream_id)
                else:
                    self._broken[stream_id] = group[-1].version
                    self.stats.stale += len(ks)
                    if answer != _STALE:
                        self.stats.over_quota += len(ks)
                    for k in ks:
                        results[k] = StaleStream() if answer == _STALE else QuotaRefused()
                cursor.nextset()
        return list(dict.fromkeys(stored))

    def _fail(self, jobs: list[_Job], error: Exception) -> None:
        for job in jobs:
            if job.commit is not None:
                # What follows it in the flight was decided on top of it.
                previous = self._broken.get(job.commit.stream_id, 0)
                self._broken[job.commit.stream_id] = max(previous, job.commit.version)
            _settle(job, error)


def _size(job: _Job | None) -> int:
    return job.commit.size if job is not None and job.commit is not None else 0


def _settle(job: _Job, result: object) -> None:
    if job.future is None:
        return
    # RuntimeError: the loop is closed, so nobody is waiting any more.
    with contextlib.suppress(RuntimeError):
        job.loop.call_soon_threadsafe(_resolve, job.future, result)


def _resolve(future: asyncio.Future[Any], result: object) -> None:
    if future.done():
        return
    if isinstance(result, Exception):
        future.set_exception(result)
    else:
        future.set_result(result)

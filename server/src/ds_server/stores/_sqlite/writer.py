"""The single writer thread: queued mutations committed together (group commit).

Callers on the event loop ``submit`` a mutation and get a future. The
thread takes everything queued, runs it in ONE transaction and resolves the
futures only after ``COMMIT`` returned, i.e. after the WAL reached the disk
(``synchronous=FULL``): concurrent writers, on any streams, share one fsync.

If the shared transaction fails (a mutation refused, ``SQLITE_FULL``...),
it is rolled back entirely and each mutation is retried in a transaction of
its own, so exactly the mutations that cannot be stored fail and nothing is
ever half-written.

Between batches, when the queue is empty, the thread returns pages freed by
purges and snapshots to the file system a few at a time (``PRAGMA
incremental_vacuum``), then checkpoints so the file really shrinks;
reclaiming space never delays a write by much.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import queue
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from ds_server.metrics.recorder import observe_commit
from ds_server.stores._sqlite import schema
from ds_server.stores.errors import PayloadTooLarge, StorageFull

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

T = TypeVar("T")

log = logging.getLogger("ds_server.sqlite")

# Enough to amortize an fsync over many writers, small enough to keep latency flat.
_MAX_BATCH = 512
# Pages handed back per idle step: 1 MiB at the default page size. Well below
# the page cache (2 MiB by default): a bigger step spills the pages it is about
# to truncate into the WAL, writing the freed space once more.
_RECLAIM_PAGES = 256


@dataclass(slots=True)
class WriterStats:
    """Counters for tests and metrics."""

    transactions: int = 0  # committed write transactions
    mutations: int = 0  # mutations committed in them
    reclaimed_pages: int = 0


@dataclass(slots=True)
class _Job:
    work: Callable[[sqlite3.Connection], Any]
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Any]
    frees: bool = False  # deletes data: reclaim space afterwards
    # Runs alone, outside any transaction (vacuum, checkpoint).
    bare: bool = False


@dataclass(slots=True)
class _State:
    reclaim_due: bool = False
    # Pages handed back since the last checkpoint that shrank the file.
    unshrunk_pages: int = 0
    stopping: bool = False
    stats: WriterStats = field(default_factory=WriterStats)


def storage_error(error: Exception) -> Exception:
    """The domain error for a failed SQLite call (the error itself if none fits)."""
    if isinstance(error, sqlite3.Error):
        code = getattr(error, "sqlite_errorcode", 0) & 0xFF
        if code == sqlite3.SQLITE_FULL:
            return StorageFull("storage is full; nothing was written")
        if code == sqlite3.SQLITE_TOOBIG:
            return PayloadTooLarge("payload exceeds what the database can store")
    return error


class Writer:
    """Owns the write connection; every mutation goes through :meth:`submit`."""

    def __init__(self, path: Path, *, max_db_bytes: int = 0) -> None:
        self._path = path
        self._max_db_bytes = max_db_bytes
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._conn: sqlite3.Connection | None = None
        self._thread: threading.Thread | None = None
        self._state = _State()
        self._held: _Job | None = None

    @property
    def stats(self) -> WriterStats:
        return self._state.stats

    @property
    def started(self) -> bool:
        return self._thread is not None

    async def start(self) -> None:
        """Create or open the database, then start the thread."""
        self._conn = await asyncio.to_thread(self._open)
        self._thread = threading.Thread(target=self._run, name="ds-sqlite-writer", daemon=True)
        self._thread.start()

    def _open(self) -> sqlite3.Connection:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        conn = schema.connect(self._path)
        try:
            schema.ensure_schema(conn)
            if self._max_db_bytes:
                pages = max(1, self._max_db_bytes // schema.PAGE_BYTES)
                conn.execute(f"PRAGMA max_page_count = {pages}")
        except BaseException:
            conn.close()
            raise
        # The database and WAL files' directory entries must survive a crash too.
        directory = os.open(self._path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
        return conn

    def submit(
        self, work: Callable[[sqlite3.Connection], T], *, frees: bool = False, bare: bool = False
    ) -> asyncio.Future[T]:
        """Queue ``work``; the future resolves with its result once committed."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._queue.put(_Job(work, loop, future, frees=frees, bare=bare))
        return future

    async def stop(self) -> None:
        """Commit what is queued, checkpoint the WAL into the database, close."""
        if self._thread is None:
            return
        self._queue.put(None)
        await asyncio.to_thread(self._thread.join)
        self._thread = None

    # -- the thread -------------------------------------------------------

    def _run(self) -> None:
        assert self._conn is not None
        conn = self._conn
        try:
            while not self._state.stopping:
                batch = self._take()
                if batch:
                    self._commit(conn, batch)
        finally:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.close()

    def _take(self) -> list[_Job]:
        """The next batch: everything queued, up to a bare job (which goes alone)."""
        state = self._state
        first, self._held = self._held, None
        if first is None and state.reclaim_due:
            try:
                first = self._queue.get_nowait()
            except queue.Empty:
                self._reclaim_step()
                return []
        elif first is None:
            first = self._queue.get()
        if first is None:
            state.stopping = True
            return []
        batch = [first]
        while not first.bare and len(batch) < _MAX_BATCH:
            try:
                job = self._queue.get_nowait()
            except queue.Empty:
                break
            if job is None:
                state.stopping = True
                break
            if job.bare:
                self._held = job  # next, after what came before it
                break
            batch.append(job)
        return batch

    def _connection(self) -> sqlite3.Connection:
        assert self._conn is not None
        return self._conn

    def _commit(self, conn: sqlite3.Connection, batch: list[_Job]) -> None:
        if len(batch) == 1 and batch[0].bare:
            job = batch[0]
            try:
                result = job.work(conn)
            except Exception as error:
                _settle(job, error=storage_error(error))
            else:
                _settle(job, result=result)
            return
        try:
            results = self._transaction(conn, batch)
        except Exception as error:
            if len(batch) == 1:
                _settle(batch[0], error=storage_error(error))
            else:
                for job in batch:
                    self._commit(conn, [job])
            return
        for job, result in zip(batch, results, strict=True):
            _settle(job, result=result)

    def _transaction(self, conn: sqlite3.Connection, batch: list[_Job]) -> list[Any]:
        started = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        try:
            results = [job.work(conn) for job in batch]
            conn.execute("COMMIT")
        except BaseException:
            # SQLite may have rolled back already (SQLITE_FULL, I/O errors).
            if conn.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            raise
        observe_commit(time.perf_counter() - started, len(batch))
        stats = self._state.stats
        stats.transactions += 1
        stats.mutations += len(batch)
        if any(job.frees for job in batch):
            self._state.reclaim_due = True
        return results

    def _reclaim_step(self) -> None:
        conn = self._connection()
        try:
            before = conn.execute("PRAGMA freelist_count").fetchone()[0]
            # executescript steps the pragma to completion; execute() frees one page.
            conn.executescript(f"PRAGMA incremental_vacuum({_RECLAIM_PAGES})")
            after = conn.execute("PRAGMA freelist_count").fetchone()[0]
        except sqlite3.Error:
            log.warning("reclaiming free database pages failed; will retry after the next purge")
            self._state.reclaim_due = False
            return
        state = self._state
        state.stats.reclaimed_pages += max(0, before - after)
        state.unshrunk_pages += max(0, before - after)
        # Stop when done, or if a step frees nothing (never spin).
        state.reclaim_due = 0 < after < before
        if not state.reclaim_due and state.unshrunk_pages >= _RECLAIM_PAGES:
            # The database file shrinks only when a checkpoint copies the
            # vacuum's commits into it, and the automatic one may be far off.
            # PASSIVE never waits for readers: if some hold the WAL, a later
            # checkpoint finishes the job.
            state.unshrunk_pages = 0
            with contextlib.suppress(sqlite3.Error):
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()


def reclaim_all(conn: sqlite3.Connection) -> int:
    """Return every free page to the file system and shrink the files; a bare job."""
    freed: int = conn.execute("PRAGMA freelist_count").fetchone()[0]
    conn.executescript("PRAGMA incremental_vacuum")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    return freed


def _settle(job: _Job, *, result: object = None, error: Exception | None = None) -> None:
    # RuntimeError: the loop is closed, so nobody is waiting any more.
    with contextlib.suppress(RuntimeError):
        job.loop.call_soon_threadsafe(_resolve, job.future, result, error)


def _resolve(future: asyncio.Future[Any], result: object, error: Exception | None) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)

"""Group commit: appends written to a file since its last fsync share the next one.

A writer calls :meth:`Flusher.submit` after its bytes are in the file and
gets a future that resolves once an ``fdatasync`` that started later has
finished. Per file, at most one fsync runs at a time; every write that
arrives while it runs waits for the next, which covers them all. So N
concurrent appends to one stream cost about two fsyncs, not N; different
files sync in parallel (a kernel journal commit is shared by concurrent
fsyncs), so throughput grows with the number of writers.

An fsync failure is fatal: after a failed fsync the kernel may have dropped
the dirty pages, so what the file holds is unknown until it is read again.
The flusher fails every waiter and keeps the error in :attr:`error`; the
backend then refuses all writes until a restart recovers from the log.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

from ds_server.metrics.recorder import observe_commit
from ds_server.stores.errors import StorageFull

if TYPE_CHECKING:
    from ds_server.stores._file.filepool import FilePool, Handle

log = logging.getLogger("ds_server.stores.file")


class Flusher:
    def __init__(self, pool: FilePool, workers: int = 16) -> None:
        self._pool = pool
        self._lock = threading.Lock()
        # Files with a sync running or due, and who waits for the next one.
        self._waiting: dict[Handle, list[Future[None]]] = {}
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ds-fsync")
        self.fsyncs = 0
        self.error: StorageFull | None = None

    def submit(self, handle: Handle) -> Future[None]:
        """A future resolved when everything written to ``handle`` so far is on disk."""
        future: Future[None] = Future()
        with self._lock:
            if self.error is not None:
                future.set_exception(self.error)
                return future
            waiters = self._waiting.get(handle)
            if waiters is None:
                # Hold the file open until its syncs are done.
                self._pool.pin(handle)
                self._waiting[handle] = [future]
                self._executor.submit(self._sync, handle)
            else:
                waiters.append(future)
        return future

    def sync_now(self, fd: int) -> None:
        """fsync in the calling thread (creates, deletes); counted, and fatal on failure."""
        try:
            os.fsync(fd)
        except OSError as error:
            raise self._fail(error) from error
        with self._lock:
            self.fsyncs += 1

    def close(self) -> None:
        """Wait for running syncs and stop the workers."""
        self._executor.shutdown(wait=True)

    def _sync(self, handle: Handle) -> None:
        while True:
            with self._lock:
                waiters = self._waiting[handle]
                if not waiters:
                    del self._waiting[handle]
                    break
                self._waiting[handle] = []
            error: StorageFull | None = None
            started = time.perf_counter()
            try:
                os.fdatasync(handle.fd)
            except OSError as failure:
                error = self._fail(failure)
            else:
                observe_commit(time.perf_counter() - started, len(waiters))
            with self._lock:
                self.fsyncs += 1
            for waiter in waiters:
                if error is None:
                    waiter.set_result(None)
                else:
                    waiter.set_exception(error)
        self._pool.release(handle)

    def _fail(self, error: OSError) -> StorageFull:
        log.critical("fsync failed; refusing writes until restart: %s", error)
        failure = StorageFull("storage failed to persist data; restart the server to recover")
        failure.__cause__ = error
        with self._lock:
            if self.error is None:
                self.error = failure
        return failure

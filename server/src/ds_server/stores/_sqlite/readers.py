"""Reads off the event loop: a small thread pool, one read-only connection per thread.

WAL mode lets these read while the writer writes; each query sees the last
committed state, which always covers what the engine lets readers see.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, TypeVar

from ds_server.stores._sqlite import schema

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable
    from pathlib import Path

T = TypeVar("T")


class Readers:
    """Run read functions on pooled connections."""

    def __init__(self, path: Path, threads: int) -> None:
        self._path = path
        self._executor = ThreadPoolExecutor(
            max_workers=threads, thread_name_prefix="ds-sqlite-read"
        )
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()

    async def run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """``work(connection)`` on a pool thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._call, work)

    def _call(self, work: Callable[[sqlite3.Connection], T]) -> T:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = schema.connect(self._path, readonly=True)
            with self._lock:
                self._connections.append(conn)
        return work(conn)

    async def close(self) -> None:
        """Wait for running reads, then close every connection."""
        await asyncio.to_thread(self._executor.shutdown, wait=True)
        with self._lock:
            connections, self._connections = self._connections, []
        for conn in connections:
            conn.close()

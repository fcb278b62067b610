"""Checkpoints: now and then, record in the catalog where each changed log ends and its state there.

Start-up then replays only the records after a stream's checkpoint. The
catalog has one thread of its own, so its writes keep the order they were
issued in; every entry is snapshotted on the event loop, where the engine's
states always match their logs' ends.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from ds_server.stores._file.catalog import Catalog, Put

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path

    from ds_server.stores._file.catalog import Loaded, Op
    from ds_server.stores._file.files import StreamLog

log = logging.getLogger("ds_server.stores.file")

P = ParamSpec("P")
T = TypeVar("T")


class Checkpointer:
    def __init__(self, path: Path, logs: Mapping[str, StreamLog]) -> None:
        self._catalog = Catalog(path)
        self._logs = logs
        self._dirty: set[str] = set()
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ds-file-catalog")

    async def load(self) -> Loaded:
        return await self._run(self._catalog.load)

    def mark(self, stream_id: str) -> None:
        """The stream's log or state changed; checkpoint it next time."""
        self._dirty.add(stream_id)

    def forget(self, stream_id: str) -> None:
        self._dirty.discard(stream_id)

    async def checkpoint(self) -> None:
        """Append an entry for every changed stream; compact if the journal grew a lot."""
        dirty, self._dirty = self._dirty, set()
        puts: list[Op] = [Put(self._logs[sid].entry()) for sid in dirty if sid in self._logs]
        await self.write(puts)
        if self._catalog.wants_compaction:
            await self.compact()

    async def compact(self, *, clean: bool = False) -> None:
        """Rewrite the catalog from every stream's current entry (``clean``: at shutdown)."""
        dirty, self._dirty = self._dirty, set()
        entries = [stream.entry() for stream in self._logs.values()]
        try:
            await self._run(self._catalog.compact, entries, clean=clean)
        except OSError as error:
            # Best effort too: the old journal stays, and so do the changes to record.
            log.warning("catalog compaction failed: %s", error)
            self._dirty |= dirty

    async def write(self, ops: Sequence[Op]) -> None:
        """Append to the catalog, best effort: it is a cache, the logs hold the truth."""
        if not ops:
            return
        try:
            await self._run(self._catalog.append, ops)
        except OSError as error:
            log.warning("catalog write failed: %s", error)

    def close(self) -> None:
        self._thread.submit(self._catalog.close).result()
        self._thread.shutdown(wait=True)

    async def _run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._thread, functools.partial(fn, *args, **kwargs))

"""A bounded LRU of open log files, so 10,000 streams never hold 10,000 descriptors.

A handle is pinned while a thread reads, writes or fsyncs through it; only
unpinned handles are closed to make room. So the pool may briefly hold more
than its capacity when that many files are in use at once, and shrinks back
as they are released. Thread-safe: all I/O runs in worker threads.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

_FLAGS = os.O_RDWR | getattr(os, "O_CLOEXEC", 0)


class Handle:
    """An open file and how many users hold it."""

    __slots__ = ("doomed", "fd", "key", "pins")

    def __init__(self, key: str, fd: int) -> None:
        self.key = key
        self.fd = fd
        self.pins = 0
        self.doomed = False  # left the pool; close when the last user lets go


class FilePool:
    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("the file pool needs room for at least one file")
        self.capacity = capacity
        self._handles: OrderedDict[str, Handle] = OrderedDict()
        self._doomed = 0
        self._lock = threading.Lock()

    @property
    def open_files(self) -> int:
        """Descriptors open right now, including ones waiting for their last user."""
        with self._lock:
            return len(self._handles) + self._doomed

    def acquire(self, key: str, path: str | Path, *, create: bool = False) -> Handle:
        """Pin the file ``key`` (opening ``path`` if needed); ``create`` makes a new file."""
        with self._lock:
            handle = self._handles.get(key)
            if handle is None:
                flags = _FLAGS | (os.O_CREAT | os.O_EXCL if create else 0)
                handle = Handle(key, os.open(path, flags, 0o644))
                self._handles[key] = handle
            else:
                self._handles.move_to_end(key)
            handle.pins += 1
            self._evict()
            return handle

    def pin(self, handle: Handle) -> None:
        with self._lock:
            handle.pins += 1

    def release(self, handle: Handle) -> None:
        with self._lock:
            handle.pins -= 1
            if handle.pins == 0 and handle.doomed:
                self._doomed -= 1
                os.close(handle.fd)
            else:
                self._evict()

    def discard(self, key: str) -> None:
        """Close ``key``'s file (once unpinned): it is about to be deleted."""
        with self._lock:
            handle = self._handles.pop(key, None)
            if handle is not None:
                self._retire(handle)

    def close(self) -> None:
        with self._lock:
            for handle in list(self._handles.values()):
                self._retire(handle)
            self._handles.clear()

    def _retire(self, handle: Handle) -> None:
        if handle.pins == 0:
            os.close(handle.fd)
        else:
            handle.doomed = True
            self._doomed += 1

    def _evict(self) -> None:
        if len(self._handles) <= self.capacity:
            return
        for key, handle in list(self._handles.items()):
            if len(self._handles) <= self.capacity:
                return
            if handle.pins == 0:
                del self._handles[key]
                os.close(handle.fd)

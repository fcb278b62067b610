"""Free space on the data directory's file system, to refuse what cannot fit before writing.

``statvfs`` is a cheap metadata call; its answer is cached for a second and
lowered by what was written since, so a burst cannot overrun it by much.
The check only avoids a doomed write: a write that still hits ENOSPC is
cut back and refused the same way (``segment.write_at``).
"""

from __future__ import annotations

import os
import threading
import time
from typing import TYPE_CHECKING

from ds_server.stores.errors import StorageFull

if TYPE_CHECKING:
    from pathlib import Path

_REFRESH_SECS = 1.0
# Room kept for record framing and the catalog.
_SLACK = 64 * 1024


class FreeSpace:
    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._free: int | None = None
        self._spent = 0
        self._checked = 0.0

    def reserve(self, size: int) -> None:
        """Raise StorageFull if ``size`` more bytes surely do not fit."""
        if time.monotonic() - self._checked > _REFRESH_SECS or self._short(size):
            self._refresh()
            if self._short(size):
                raise StorageFull()

    def spend(self, size: int) -> None:
        with self._lock:
            self._spent += size

    def _short(self, size: int) -> bool:
        with self._lock:
            return self._free is not None and size + _SLACK > self._free - self._spent

    def _refresh(self) -> None:
        try:
            stats = os.statvfs(self._path)
        except OSError:
            free = None  # unknown: let the write find out
        else:
            free = stats.f_bavail * stats.f_frsize
        with self._lock:
            self._free, self._spent, self._checked = free, 0, time.monotonic()

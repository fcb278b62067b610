"""Log lines written to a file descriptor by a thread of their own.

The event loop hands over whole batches of lines and never waits for the
write: a stderr that is read slowly (a busy log collector, a full pipe)
slows this thread, not the server. What waits is bounded: past
``max_backlog`` bytes a batch is dropped and counted, and once the writes
catch up a line says how many were lost.

On a pipe, where ``logging``'s own records share the descriptor, each write
is at most ``PIPE_BUF`` bytes and ends at a line's end: the kernel writes
those whole, so no other writer's line lands inside one of ours.
"""

from __future__ import annotations

import contextlib
import os
import select
import stat
import threading
from queue import SimpleQueue
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Callable

MAX_BACKLOG: Final = 32 * 1024 * 1024
_ATOMIC: Final = select.PIPE_BUF


class LineWriter:
    """Writes batches of whole lines to ``fd`` from a daemon thread, in the order given."""

    def __init__(
        self,
        fd: int,
        dropped_notice: Callable[[int], bytes],
        *,
        max_backlog: int = MAX_BACKLOG,
    ) -> None:
        self._fd = fd
        self._notice = dropped_notice
        self._max_backlog = max_backlog
        self._queue: SimpleQueue[bytes] = SimpleQueue()
        self._changed = threading.Condition()
        self._backlog = 0  # bytes queued, not yet written
        self._dropped = 0  # lines dropped since the last notice
        self._thread: threading.Thread | None = None
        self._pipe = _is_pipe(fd)

    def write(self, data: bytes, lines: int) -> None:
        """Queue ``data`` (``lines`` whole lines) to be written; drop it if too much waits."""
        with self._changed:
            if self._backlog + len(data) > self._max_backlog:
                self._dropped += lines
                return
            if self._dropped:
                data = self._notice(self._dropped) + data
                self._dropped = 0
            self._backlog += len(data)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="ds-request-log", daemon=True
                )
                self._thread.start()
        self._queue.put(data)

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until everything queued is written; False if ``timeout`` passed first."""
        with self._changed:
            return self._changed.wait_for(lambda: self._backlog == 0, timeout)

    def _run(self) -> None:
        while True:
            data = self._queue.get()
            # An error means nowhere is left to log to (stderr closed): the lines are lost.
            with contextlib.suppress(OSError):
                self._write(data)
            with self._changed:
                self._backlog -= len(data)
                self._changed.notify_all()

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        start, size = 0, len(data)
        while start < size:
            end = size
            if self._pipe and size - start > _ATOMIC:
                cut = data.rfind(b"\n", start, start + _ATOMIC)
                if cut < 0:  # one line longer than the atomic size: written alone
                    cut = data.find(b"\n", start + _ATOMIC)
                end = size if cut < 0 else cut + 1
            while start < end:
                try:
                    start += os.write(self._fd, view[start:end])
                except BlockingIOError:  # a descriptor another process made non-blocking
                    select.select([], [self._fd], [])


def _is_pipe(fd: int) -> bool:
    try:
        return stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        return False

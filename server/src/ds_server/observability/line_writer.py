"""Log lines written to a file descriptor without the event loop ever waiting for it.

The event loop hands over whole batches of lines. What the descriptor takes
at once (a file, a pipe with room) is written there and then; the rest goes
to a thread of its own, so a stderr that is read slowly (a busy log
collector, a full pipe) slows that thread, not the server. (Through the
thread every batch would cost a wake-up and two handovers of the GIL.) What
waits is bounded: past ``max_backlog`` bytes a batch is dropped and
counted, and once the writes catch up a line says how many were lost.

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
        mode = _mode(fd)
        self._pipe = stat.S_ISFIFO(mode)
        # A regular file takes any write at once; anything else is asked first.
        self._file = stat.S_ISREG(mode)
        self._ready = select.poll()
        self._ready.register(fd, select.POLLOUT)

    def write(self, data: bytes, lines: int) -> None:
        """Write ``data`` (``lines`` whole lines), or what can't go now later; drop it if too
        much waits."""
        with self._changed:
            if self._backlog + len(data) > self._max_backlog:
                self._dropped += lines
                return
            if self._dropped:
                data = self._notice(self._dropped) + data
                self._dropped = 0
            if self._backlog == 0:  # nothing queued before it: write what can go now
                written = self._write_now(data)
                if written == len(data):
                    return
                data = data[written:]
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

    def _write_now(self, data: bytes) -> int:
        """Write the lines of ``data`` the descriptor takes without waiting; how many bytes.

        Lost lines (the descriptor fails) count as written.
        """
        view = memoryview(data)
        start, size = 0, len(data)
        try:
            while start < size:
                if not self._file and not self._ready.poll(0):
                    return start
                # Not a file: at most what it reports room for (on a pipe, PIPE_BUF).
                end = size if self._file else self._chunk_end(data, start, always=True)
                while start < end:
                    start += os.write(self._fd, view[start:end])
        except BlockingIOError:  # a descriptor another process made non-blocking
            return start
        except OSError:
            return size  # nowhere left to log to (stderr closed): the lines are lost
        return start

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        start, size = 0, len(data)
        while start < size:
            end = self._chunk_end(data, start, always=False)
            while start < end:
                try:
                    start += os.write(self._fd, view[start:end])
                except BlockingIOError:  # a descriptor another process made non-blocking
                    self._ready.poll()

    def _chunk_end(self, data: bytes, start: int, *, always: bool) -> int:
        """Where the next write from ``start`` ends: after whole lines, at most ``PIPE_BUF``
        bytes on a pipe (or ``always``) unless one line alone is longer."""
        size = len(data)
        if size - start <= _ATOMIC or not (self._pipe or always):
            return size
        cut = data.rfind(b"\n", start, start + _ATOMIC)
        if cut < 0:  # one line longer than the atomic size: written alone
            cut = data.find(b"\n", start + _ATOMIC)
        return size if cut < 0 else cut + 1


def _mode(fd: int) -> int:
    try:
        return os.fstat(fd).st_mode
    except OSError:
        return 0

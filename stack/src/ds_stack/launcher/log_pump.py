"""A child's output into its log file, rotated by size.

A stack left running for months must not fill its disk with logs: Envoy's
access log alone grows by ~230 MB a day under ``make dev``'s own traffic.
With a ``LogRotation`` the launcher reads the child's output from a pipe
and writes it itself, so it can start a new file when the current one is
full (``envoy.log`` → ``envoy.log.1`` → … ``envoy.log.<keep>``, the oldest
dropped), with no line lost or cut at the switch, whatever the child is
(Envoy, Postgres and Python alike). Bytes pass unchanged: a line is
written as the child wrote it (so ``logging.handlers.RotatingFileHandler``,
which formats ``str`` records, does not fit).
"""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

# A "line" longer than this (output with no newline, such as progress bars
# redrawn with \r) is written in pieces of this size rather than held whole
# (all in the same file).
_MAX_LINE = 64 * 1024


@dataclass(frozen=True, slots=True)
class LogRotation:
    """Start a new file once the current one would pass ``max_bytes``; keep ``keep`` old ones."""

    max_bytes: int
    keep: int

    def __post_init__(self) -> None:
        if self.max_bytes < 1:
            raise ValueError(f"a log's size limit must be positive, not {self.max_bytes}")
        if self.keep < 0:
            raise ValueError(f"the old logs kept must be 0 or more, not {self.keep}")


class RotatingLog:
    """An append-only file that moves itself aside when full (not thread-safe: one writer)."""

    def __init__(self, path: Path, rotation: LogRotation) -> None:
        self.path = path
        self.rotation = rotation
        path.parent.mkdir(parents=True, exist_ok=True)
        # Unbuffered: each line is in the file as soon as the child wrote it (`tail -f`).
        self._file = path.open("ab", buffering=0)
        self._size = self._file.tell()
        # Whether the next write starts a line: a line that comes in pieces (longer
        # than _MAX_LINE) is never split between two files.
        self._line_start = True

    def write(self, data: bytes) -> None:
        if self._line_start and self._size and self._size + len(data) > self.rotation.max_bytes:
            self._rotate()
        self._file.write(data)
        self._size += len(data)
        self._line_start = data.endswith(b"\n")

    def _rotate(self) -> None:
        self._file.close()
        keep = self.rotation.keep
        if keep == 0:
            self.path.unlink(missing_ok=True)
        else:
            for older in range(keep - 1, 0, -1):
                with contextlib.suppress(FileNotFoundError):
                    os.replace(self._numbered(older), self._numbered(older + 1))
            os.replace(self.path, self._numbered(1))
        self._file = self.path.open("ab", buffering=0)
        self._size = 0

    def _numbered(self, n: int) -> Path:
        return self.path.with_name(f"{self.path.name}.{n}")

    def close(self) -> None:
        self._file.close()


class LogPump:
    """A thread copying ``source`` (the child's stdout and stderr) into a ``RotatingLog``
    until every writer has closed it; ``seen`` is set once a line holds ``watch``."""

    def __init__(self, source: IO[bytes], log: RotatingLog, watch: str | None = None) -> None:
        self._source = source
        self._log = log
        self._watch = None if watch is None else watch.encode()
        self.seen = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"log {log.path.name}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        source, log, watch = self._source, self._log, self._watch
        try:
            while line := source.readline(_MAX_LINE):
                log.write(line)
                if watch is not None and watch in line:
                    self.seen.set()
                    watch = None
        finally:
            log.close()
            source.close()

    def join(self, timeout: float) -> None:
        """Wait for the output's end (a child's descendants may hold it a while)."""
        self._thread.join(timeout)

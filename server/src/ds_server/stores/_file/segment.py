"""One stream's append-only log file: positioned writes, reads, and the recovery scan.

Every function takes an open descriptor and runs in a worker thread. The
log is the source of truth: ``scan`` walks records from a known-good
position, checks each one, and reports where the intact prefix ends, so
recovery can cut a torn tail there.
"""

from __future__ import annotations

import contextlib
import errno
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ds_server.stores._file import records
from ds_server.stores._file.records import HEAD, TRAIL, CorruptRecord, Head
from ds_server.stores.errors import StorageFull

if TYPE_CHECKING:
    from collections.abc import Iterator

# Errors that mean "no room": a full disk, a quota, a file-size limit.
_NO_SPACE = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
# Reads smaller than this go through one shared window, to batch small records.
WINDOW = 256 * 1024


def write_at(fd: int, pos: int, data: bytes) -> None:
    """Write ``data`` at ``pos`` completely, or leave the file ending at ``pos``.

    A failed or interrupted write is cut back so nothing is half-written;
    running out of space raises ``StorageFull``.
    """
    view = memoryview(data)
    written = 0
    try:
        while written < len(view):
            written += os.pwrite(fd, view[written:], pos + written)
    except OSError as error:
        # If even this fails, the next write lands at ``pos`` again and recovery cuts the rest.
        with contextlib.suppress(OSError):
            os.ftruncate(fd, pos)
        if error.errno in _NO_SPACE:
            raise StorageFull() from error
        raise


def no_space(error: OSError) -> bool:
    """True when ``error`` means the file system has no room (or the file may not grow)."""
    return error.errno in _NO_SPACE


def read_at(fd: int, pos: int, size: int) -> bytes:
    """Exactly ``size`` bytes at ``pos``, or fewer at end of file."""
    data = os.pread(fd, size, pos)
    if len(data) == size or not data:
        return data
    parts = [data]
    got = len(data)
    while got < size:
        more = os.pread(fd, size - got, pos + got)
        if not more:
            break
        parts.append(more)
        got += len(more)
    return b"".join(parts)


class Reader:
    """Positioned reads through a window, so walking many small records costs few syscalls."""

    def __init__(self, fd: int, window: int = WINDOW, end: int | None = None) -> None:
        self.fd = fd
        self._window = window
        self._end = end  # no window reads past here (the file's known length)
        self._pos = 0
        self._buf = b""

    def read(self, pos: int, size: int) -> bytes:
        offset = pos - self._pos
        if offset >= 0 and offset + size <= len(self._buf):
            return self._buf[offset : offset + size]
        if size >= self._window // 2:
            return read_at(self.fd, pos, size)
        window = (
            self._window if self._end is None else max(size, min(self._window, self._end - pos))
        )
        self._pos, self._buf = pos, read_at(self.fd, pos, window)
        return self._buf[:size]

    def head(self, pos: int) -> Head:
        return records.parse_head(self.read(pos, HEAD.size), pos)

    def prefix(self, head: Head) -> bytes:
        """A record's head, meta and lengths."""
        return self.read(head.pos, head.prefix_len)


@dataclass(frozen=True, slots=True)
class Scanned:
    """An intact record met by ``scan``: its head, meta and CRC."""

    head: Head
    meta: bytes
    crc: int


def scan(fd: int, pos: int, size: int) -> Iterator[Scanned]:
    """Intact records from ``pos`` to ``size`` (the file's length), each one checked.

    Stops at the first torn or corrupt record; the caller truncates there.
    """
    reader = Reader(fd, window=1024 * 1024, end=size)
    while pos < size:
        try:
            head = reader.head(pos)
            if head.end_pos > size:
                return
            record = reader.read(pos, head.size)
            crc = records.verify(record, head)
        except CorruptRecord:
            return
        yield Scanned(head, records.meta(record, head), crc)
        pos = head.end_pos


def heads(fd: int, pos: int, end: int) -> Iterator[Head]:
    """Record heads from ``pos`` to ``end``, unchecked (the span was checked already)."""
    reader = Reader(fd, window=1024 * 1024, end=end)
    while pos < end:
        head = reader.head(pos)
        yield head
        pos = head.end_pos


def trail_crc(fd: int, end_pos: int) -> int | None:
    """The CRC in the trail of the record ending at ``end_pos``, None if there is none."""
    if end_pos < HEAD.size + TRAIL.size:
        return None
    try:
        crc, size = records.parse_trail(read_at(fd, end_pos - TRAIL.size, TRAIL.size))
    except CorruptRecord:
        return None
    return crc if size <= end_pos else None


def truncate(fd: int, size: int) -> None:
    os.ftruncate(fd, size)

"""Retention rewrite: a new generation of a log without the records a snapshot retired.

The new file starts with a BASE record (the stream's state where the kept
records start) followed by the kept records, byte for byte, so their
offsets, CRCs and relative positions are unchanged. It is built under a
temporary name, fsynced (durable mode), and renamed to the next generation's
name; from then on it is the log, and the old file is unlinked. A crash
before the rename leaves a temporary file (removed on start), after it two
generations (the older is removed on start).
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

from ds_server.stores._file import segment

if TYPE_CHECKING:
    from collections.abc import Callable

_COPY_CHUNK = 1024 * 1024
_FLAGS = os.O_RDWR | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)


def begin(tmp: str, base: bytes, src_fd: int, start: int, end: int) -> int:
    """Create ``tmp`` holding ``base`` and the source's bytes ``[start, end)``; its descriptor."""
    fd = os.open(tmp, _FLAGS, 0o644)
    try:
        segment.write_at(fd, 0, base)
        copy(src_fd, fd, start, end, len(base))
    except BaseException:
        abort(tmp, fd)
        raise
    return fd


def copy(src_fd: int, dst_fd: int, start: int, end: int, at: int) -> None:
    """Copy the source's bytes ``[start, end)`` to ``at`` in the destination."""
    while start < end:
        chunk = segment.read_at(src_fd, start, min(_COPY_CHUNK, end - start))
        if not chunk:
            raise OSError(f"log ended at {start}, before {end}")
        segment.write_at(dst_fd, at, chunk)
        start += len(chunk)
        at += len(chunk)


def finish(tmp: str, fd: int, path: str, sync: Callable[[int], None] | None) -> None:
    """Make ``tmp`` the log at ``path``: fsync it (``sync``), rename it, close it."""
    try:
        if sync is not None:
            sync(fd)
        os.replace(tmp, path)
    except BaseException:
        abort(tmp, fd)
        raise
    os.close(fd)


def abort(tmp: str, fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(tmp)

"""The metadata index: one journal of stream entries, checkpoints and access times.

``catalog.log`` is a sequence of framed msgpack records (u32 length, u32
CRC, payload): ``Put`` (a stream's configuration and a checkpoint of its
log), ``Drop`` (a purged stream) and ``Access`` (last-access times). Loading
folds them into one entry per stream and stops at the first damaged frame.

The catalog is a cache of the logs, never the only copy of anything that
was acknowledged: each log starts with its stream's configuration and
carries every change that must survive a crash. So the journal is appended
without fsync; losing its tail only means start-up scans more of the logs.
It is compacted (rewritten via tmp + fsync + rename + directory fsync) at
shutdown, after an unclean start, and when it grows well past its live
size. A clean shutdown ends it with a ``Clean`` marker: the next start may
then trust every checkpoint whose log still has exactly the checkpointed
length, without opening the log (10,000 streams start in a fraction of a
second); after a crash, each checkpoint is checked against its log first.
"""

from __future__ import annotations

import contextlib
import os
import struct
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import msgspec

from ds_server.stores._file.codec import Entry  # noqa: TC001 - msgspec needs it at runtime

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from pathlib import Path

_FRAME = struct.Struct("<II")
# Compact when the journal is this much bigger than the last compaction.
_GROWTH = 4
_MIN_COMPACT_BYTES = 4 * 1024 * 1024


class Put(msgspec.Struct, tag="put", array_like=True, frozen=True):
    entry: Entry


class Drop(msgspec.Struct, tag="drop", array_like=True, frozen=True):
    stream_id: str


class Access(msgspec.Struct, tag="access", array_like=True, frozen=True):
    times: list[tuple[str, float]]


class Clean(msgspec.Struct, tag="clean", array_like=True, frozen=True):
    """Written last by a clean shutdown: every checkpoint before it matches its log's end."""


Op = Put | Drop | Access | Clean
_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(Op)


@dataclass(slots=True)
class Loaded:
    entries: dict[str, Entry] = field(default_factory=dict)
    # Access times newer than (or without) a Put; applied over the entries.
    accesses: dict[str, float] = field(default_factory=dict)
    # The journal ends with a clean shutdown's Clean marker.
    clean: bool = False


def frame(ops: Iterable[Op]) -> bytes:
    parts = []
    for op in ops:
        payload = _encoder.encode(op)
        parts.append(_FRAME.pack(len(payload), zlib.crc32(payload)))
        parts.append(payload)
    return b"".join(parts)


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Catalog:
    """The journal file; every method runs in the backend's single catalog thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._size = 0
        self._compacted_size = 0

    def load(self) -> Loaded:
        """Fold the journal into entries; a damaged tail is cut off."""
        loaded = Loaded()
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return loaded
        view = memoryview(raw)
        pos = 0
        while pos + _FRAME.size <= len(raw):
            length, crc = _FRAME.unpack_from(view, pos)
            payload = view[pos + _FRAME.size : pos + _FRAME.size + length]
            if len(payload) != length or zlib.crc32(payload) != crc:
                break
            try:
                op = _decoder.decode(payload)
            except msgspec.DecodeError:
                break
            _fold(loaded, op)
            pos += _FRAME.size + length
        if pos < len(raw):
            # A torn tail would hide everything appended after it.
            with self.path.open("r+b") as journal:
                journal.truncate(pos)
        self._size = pos
        if loaded.clean:
            self._compacted_size = pos
        return loaded

    def compact(self, entries: Sequence[Entry], *, clean: bool = False) -> None:
        """Replace the journal with one Put per live stream, crash-safely."""
        self._close()
        tmp = self.path.with_name(self.path.name + ".tmp")
        ops: list[Op] = [Put(entry) for entry in entries]
        if clean:
            ops.append(Clean())
        data = frame(ops)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            _write_all(fd, data)
            os.fsync(fd)
        except OSError:
            tmp.unlink()  # do not keep a useless copy on a full disk
            raise
        finally:
            os.close(fd)
        os.replace(tmp, self.path)
        fsync_dir(self.path.parent)
        self._size = self._compacted_size = len(data)

    def append(self, ops: Sequence[Op]) -> None:
        """Add ops at the end of the journal (no fsync: see the module docstring)."""
        if not ops:
            return
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            self._size = os.fstat(self._fd).st_size
        data = frame(ops)
        try:
            _write_all(self._fd, data)
        except OSError:
            # Keep the journal whole: a torn frame would hide every later one.
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, self._size)
            raise
        self._size += len(data)

    @property
    def wants_compaction(self) -> bool:
        return self._size > max(_MIN_COMPACT_BYTES, _GROWTH * self._compacted_size)

    def close(self) -> None:
        self._close()

    def _close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _fold(loaded: Loaded, op: Op) -> None:
    loaded.clean = isinstance(op, Clean)
    if isinstance(op, Put):
        loaded.entries[op.entry.stream_id] = op.entry
        loaded.accesses.pop(op.entry.stream_id, None)
    elif isinstance(op, Drop):
        loaded.entries.pop(op.stream_id, None)
        loaded.accesses.pop(op.stream_id, None)
    elif isinstance(op, Access):
        for stream_id, moment in op.times:
            loaded.accesses[stream_id] = max(moment, loaded.accesses.get(stream_id, 0.0))

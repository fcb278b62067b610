"""A stream's snapshot file, ``{id}.snap``: the blob and what describes it, replaced atomically.

``magic | meta length | meta CRC | blob CRC | meta | blob``, where meta is
the snapshot's (offset, content type, size, created at). A new snapshot is
written to a temporary file, fsynced, and renamed over the previous one, so
the blob, its offset (the stream's earliest retained offset) and the
dropping of the previous snapshot happen in one step.
"""

from __future__ import annotations

import os
import struct
import zlib
from typing import TYPE_CHECKING

import msgspec

from ds_server.stores._file import segment
from ds_server.stores.errors import SnapshotNotFound, StorageFull

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from ds_server.stores._file.codec import FileKey, Snapshot

_HEADER = struct.Struct("<4sIII")
_MAGIC = b"DSSN"
_meta_decoder = msgspec.msgpack.Decoder(tuple[int, str, int, float])


def write(
    path: Path, snapshot: Snapshot, data: bytes, sync: Callable[[int], None] | None
) -> FileKey:
    """Replace the snapshot file; ``sync`` (durable mode) fsyncs the file before the rename."""
    meta = msgspec.msgpack.encode(snapshot)
    header = _HEADER.pack(_MAGIC, len(meta), zlib.crc32(meta), zlib.crc32(data))
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        segment.write_at(fd, 0, header + meta + data)
        if sync is not None:
            sync(fd)
        stat = os.fstat(fd)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    try:
        os.replace(tmp, path)
    except OSError as error:
        tmp.unlink(missing_ok=True)
        if segment.no_space(error):
            raise StorageFull() from error
        raise
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns)


def read_info(path: Path) -> Snapshot | None:
    """What the snapshot file describes, or None if it is damaged."""
    try:
        with path.open("rb") as file:
            head = file.read(_HEADER.size)
            magic, meta_len, meta_crc, _ = _HEADER.unpack(head)
            meta = file.read(meta_len)
    except (OSError, struct.error):
        return None
    if magic != _MAGIC or len(meta) != meta_len or zlib.crc32(meta) != meta_crc:
        return None
    try:
        return _meta_decoder.decode(meta)
    except msgspec.DecodeError:
        return None


def read_blob(path: Path, offset: int) -> bytes:
    """The blob of the snapshot at ``offset``; SnapshotNotFound if the file holds another."""
    try:
        raw = path.read_bytes()
        magic, meta_len, meta_crc, blob_crc = _HEADER.unpack_from(raw)
    except (FileNotFoundError, struct.error):
        raise SnapshotNotFound() from None
    meta = raw[_HEADER.size : _HEADER.size + meta_len]
    blob = raw[_HEADER.size + meta_len :]
    if magic != _MAGIC or zlib.crc32(meta) != meta_crc or zlib.crc32(blob) != blob_crc:
        raise OSError(f"{path.name} is damaged")
    if _meta_decoder.decode(meta)[0] != offset:
        raise SnapshotNotFound()
    return blob

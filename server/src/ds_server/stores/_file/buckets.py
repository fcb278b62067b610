"""The bucket list, ``buckets.msgpack``: rewritten whole (tmp, fsync, rename) on every change.

Buckets are created and deleted rarely, and there are few of them, so one
small file replaced atomically keeps them durable without a journal.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import msgspec

from ds_server.stores._file import segment
from ds_server.stores._file.catalog import fsync_dir

if TYPE_CHECKING:
    from pathlib import Path

_decoder = msgspec.msgpack.Decoder(list[tuple[str, float]])


def load(path: Path) -> list[tuple[str, float]]:
    try:
        return _decoder.decode(path.read_bytes())
    except FileNotFoundError:
        return []


def save(path: Path, buckets: dict[str, float], *, durable: bool) -> None:
    tmp = path.with_name(path.name + ".tmp")
    data = msgspec.msgpack.encode(sorted(buckets.items()))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        segment.write_at(fd, 0, data)
        if durable:
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    os.replace(tmp, path)
    if durable:
        fsync_dir(path.parent)

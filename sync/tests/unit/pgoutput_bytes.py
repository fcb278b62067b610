"""pgoutput protocol 1 messages built byte by byte, as Postgres sends them (for the unit tests)."""

from __future__ import annotations

import struct

from ds_sync.mirror.pgoutput import POSTGRES_EPOCH_UNIX_US

TEXT_OID, INT4_OID = 25, 23


def begin(final_lsn: int, unix_us: int, xid: int) -> bytes:
    return b"B" + struct.pack(">QqI", final_lsn, unix_us - POSTGRES_EPOCH_UNIX_US, xid)


def commit(commit_lsn: int, end_lsn: int, unix_us: int) -> bytes:
    return b"C" + struct.pack(">bQQq", 0, commit_lsn, end_lsn, unix_us - POSTGRES_EPOCH_UNIX_US)


def relation(relid: int, columns: list[tuple[str, int]]) -> bytes:
    body = struct.pack(">I", relid) + b"public\0t\0" + b"f" + struct.pack(">h", len(columns))
    for name, oid in columns:
        body += b"\x01" + name.encode() + b"\0" + struct.pack(">Ii", oid, -1)
    return b"R" + body


def values(*items: str | bool | None) -> bytes:
    """A TupleData: text, None for NULL, False for an unchanged TOASTed value."""
    data = struct.pack(">h", len(items))
    for item in items:
        if item is None:
            data += b"n"
        elif item is False:
            data += b"u"
        else:
            raw = str(item).encode()
            data += b"t" + struct.pack(">i", len(raw)) + raw
    return data


def insert(relid: int, new: bytes) -> bytes:
    return b"I" + struct.pack(">I", relid) + b"N" + new


def update(relid: int, new: bytes, old: bytes | None = None, marker: bytes = b"O") -> bytes:
    return b"U" + struct.pack(">I", relid) + (marker + old if old else b"") + b"N" + new


def delete(relid: int, old: bytes, marker: bytes = b"O") -> bytes:
    return b"D" + struct.pack(">I", relid) + marker + old


def truncate(*relids: int) -> bytes:
    return (
        b"T" + struct.pack(">Ib", len(relids), 0) + b"".join(struct.pack(">I", r) for r in relids)
    )

"""Parsing Postgres's ``pgoutput`` logical replication messages (protocol version 1).

The native feed reads them with ``pg_logical_slot_peek_binary_changes``,
one message a row. Only what the feed needs is decoded: Begin, Commit,
Relation, Insert, Update, Delete and Truncate; Origin and Type messages
are skipped. Values arrive in their text form (the ``t`` kind); ``u``
marks an unchanged TOASTed value that the new row of an update leaves
out (the old row of a REPLICA IDENTITY FULL table has it).
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass

# Commit timestamps count microseconds from 2000-01-01, Postgres's epoch.
POSTGRES_EPOCH_UNIX_US = 946_684_800_000_000

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
_U64 = struct.Struct(">Q")
# Whole messages (after the kind byte) read in one call: they come once per transaction.
_BEGIN = struct.Struct(">QqI")
_COMMIT = struct.Struct(">BQQq")
_RELID_MARKER = struct.Struct(">Ic")
_N, _T, _U = ord("n"), ord("t"), ord("u")


class Unchanged(enum.Enum):
    """A TOASTed value an update did not change, so the new row leaves it out."""

    TOAST = "u"


UNCHANGED = Unchanged.TOAST
Value = str | None | Unchanged


class ProtocolError(ValueError):
    """A message that isn't pgoutput protocol 1 as this parser knows it."""


@dataclass(frozen=True, slots=True)
class Begin:
    final_lsn: int
    commit_time_us: int  # since the Unix epoch
    xid: int


@dataclass(frozen=True, slots=True)
class Commit:
    commit_lsn: int  # where the commit record starts
    end_lsn: int  # where it ends: the slot position that skips this transaction
    commit_time_us: int


@dataclass(frozen=True, slots=True)
class RelationColumn:
    name: str
    type_oid: int


@dataclass(frozen=True, slots=True)
class Relation:
    relid: int
    namespace: str
    name: str
    columns: tuple[RelationColumn, ...]


@dataclass(frozen=True, slots=True)
class RowChange:
    kind: str  # "insert", "update" or "delete"
    relid: int
    old: tuple[Value, ...] | None  # the row before: update and delete
    new: tuple[Value, ...] | None  # the row after: insert and update
    old_is_key: bool = False  # ``old`` holds the replica identity key only (others NULL)


@dataclass(frozen=True, slots=True)
class Truncate:
    relids: tuple[int, ...]


Message = Begin | Commit | Relation | RowChange | Truncate | None


def parse(data: bytes) -> Message:
    """One message; None for kinds the feed has no use for (Origin, Type, Message)."""
    if not data:
        raise ProtocolError("empty message")
    try:
        return _parse(data)
    except struct.error:
        raise ProtocolError("message ends early") from None


def _parse(data: bytes) -> Message:
    kind = chr(data[0])
    if kind == "B":
        final_lsn, time_us, xid = _BEGIN.unpack_from(data, 1)
        return Begin(final_lsn, time_us + POSTGRES_EPOCH_UNIX_US, xid)
    if kind == "C":
        _flags, commit_lsn, end_lsn, time_us = _COMMIT.unpack_from(data, 1)
        return Commit(commit_lsn, end_lsn, time_us + POSTGRES_EPOCH_UNIX_US)
    if kind == "I":
        relid, marker = _RELID_MARKER.unpack_from(data, 1)
        if marker != b"N":
            raise ProtocolError(f"expected b'N', found {marker!r}")
        return RowChange("insert", relid, None, _fast_tuple(data, 6)[0])
    reader = _Reader(data)
    reader.byte()
    if kind == "R":
        return _relation(reader)
    if kind == "U":
        return _update(reader)
    if kind == "D":
        relid = reader.u32()
        marker = reader.byte()
        if marker not in (ord("K"), ord("O")):
            raise ProtocolError(f"delete: unexpected tuple marker {chr(marker)!r}")
        return RowChange("delete", relid, _tuple(reader), None, old_is_key=marker == ord("K"))
    if kind == "T":
        count = reader.u32()
        reader.byte()  # options: CASCADE / RESTART IDENTITY
        return Truncate(tuple(reader.u32() for _ in range(count)))
    if kind in ("O", "Y", "M"):
        return None
    raise ProtocolError(f"unknown message kind {kind!r}")


def lsn_text(lsn: int) -> str:
    """An LSN as Postgres writes it: ``16/B374D848``."""
    return f"{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}"


def lsn_number(text: str) -> int:
    """An LSN from its text form."""
    high, _, low = text.partition("/")
    try:
        return (int(high, 16) << 32) | int(low, 16)
    except ValueError:
        raise ProtocolError(f"{text!r} is not an LSN") from None


def _relation(reader: _Reader) -> Relation:
    relid = reader.u32()
    namespace, name = reader.string(), reader.string()
    reader.byte()  # replica identity setting, read from the catalog instead
    columns = []
    for _ in range(reader.i16()):
        reader.byte()  # flags: part of the replica identity key
        column_name, type_oid = reader.string(), reader.u32()
        reader.i32()  # type modifier
        columns.append(RelationColumn(column_name, type_oid))
    return Relation(relid, namespace, name, tuple(columns))


def _update(reader: _Reader) -> RowChange:
    relid = reader.u32()
    marker = reader.byte()
    old = None
    old_is_key = marker == ord("K")
    if marker in (ord("K"), ord("O")):
        old = _tuple(reader)
        marker = reader.byte()
    if marker != ord("N"):
        raise ProtocolError(f"update: unexpected tuple marker {chr(marker)!r}")
    return RowChange("update", relid, old, _tuple(reader), old_is_key=old_is_key)


def _tuple(reader: _Reader) -> tuple[Value, ...]:
    values, reader._at = _fast_tuple(reader._data, reader._at)
    return values


def _fast_tuple(data: bytes, at: int) -> tuple[tuple[Value, ...], int]:
    """The tuple (TupleData) at ``at``, and where it ends."""
    (count,) = _I16.unpack_from(data, at)
    at += 2
    values: list[Value] = []
    size = len(data)
    for _ in range(count):
        if at >= size:
            raise ProtocolError("message ends early")
        kind = data[at]
        at += 1
        if kind == _T:
            (length,) = _I32.unpack_from(data, at)
            at += 4
            end = at + length
            if length < 0 or end > size:
                raise ProtocolError("message ends early")
            try:
                values.append(data[at:end].decode("utf-8"))
            except UnicodeDecodeError:
                raise ProtocolError("a value is not UTF-8 (the database must be UTF8)") from None
            at = end
        elif kind == _N:
            values.append(None)
        elif kind == _U:
            values.append(UNCHANGED)
        else:
            raise ProtocolError(f"unexpected value kind {chr(kind)!r} (binary values are off)")
    return tuple(values), at


class _Reader:
    __slots__ = ("_at", "_data")

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._at = 0

    def take(self, size: int) -> bytes:
        end = self._at + size
        if size < 0 or end > len(self._data):
            raise ProtocolError("message ends early")
        chunk = self._data[self._at : end]
        self._at = end
        return chunk

    def byte(self) -> int:
        return self.take(1)[0]

    def expect(self, marker: bytes) -> None:
        found = self.take(1)
        if found != marker:
            raise ProtocolError(f"expected {marker!r}, found {found!r}")

    def i16(self) -> int:
        value: int = _I16.unpack(self.take(2))[0]
        return value

    def i32(self) -> int:
        value: int = _I32.unpack(self.take(4))[0]
        return value

    def u32(self) -> int:
        value: int = _U32.unpack(self.take(4))[0]
        return value

    def i64(self) -> int:
        value: int = _I64.unpack(self.take(8))[0]
        return value

    def u64(self) -> int:
        value: int = _U64.unpack(self.take(8))[0]
        return value

    def string(self) -> str:
        end = self._data.find(b"\0", self._at)
        if end < 0:
            raise ProtocolError("unterminated string")
        text = self._data[self._at : end].decode("utf-8")
        self._at = end + 1
        return text

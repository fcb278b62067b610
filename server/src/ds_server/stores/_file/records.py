"""Record framing of a stream's log: what one create, append or state change writes.

A record is ``head | meta | lengths | data | trail``:

- ``head`` (32 bytes): magic, kind, flags, meta length, message count,
  data length, and the stream offset of the first data byte;
- ``meta``: msgpack of what must be durable together with the data (the
  producer claim and Stream-Seq that guard an append, or a stream's
  configuration for a create);
- ``lengths``: one u32 per message, so JSON message boundaries survive;
- ``data``: the messages, back to back;
- ``trail`` (16 bytes): the CRC again, the record's total length, and an
  end magic, so the last record can be found and checked from EOF.

The CRC (zlib's CRC-32) covers head, meta, lengths and data. A record whose
head, length or CRC does not check out is a torn tail: recovery cuts the log
there.
"""

from __future__ import annotations

import enum
import struct
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ds_server.stores.errors import PayloadTooLarge

if TYPE_CHECKING:
    from collections.abc import Sequence

HEAD = struct.Struct("<4sBBxxIIQQ")
TRAIL = struct.Struct("<IQ4s")
LENGTH = struct.Struct("<I")
MAGIC = b"DSLR"
END_MAGIC = b"DSLE"
# A record can never be this large; a length field beyond it is garbage.
MAX_RECORD = 1 << 40
_MAX_U32 = (1 << 32) - 1


class Kind(enum.IntEnum):
    CREATE = 1  # meta: the stream's configuration; data: the initial body
    APPEND = 2  # meta: producer claim, writer, Stream-Seq, last access
    STATE = 3  # meta: a metadata change (soft delete)
    BASE = 4  # meta: the stream's state where a rewritten log starts (an ``Entry``)


class Flag(enum.IntFlag):
    NONE = 0
    CLOSE = 1


class CorruptRecord(ValueError):
    """Bytes that are not a whole, intact record: a torn tail or garbage."""


@dataclass(frozen=True, slots=True)
class Head:
    """A record's fixed head, with where its parts lie in the file."""

    kind: Kind
    flags: Flag
    meta_len: int
    count: int
    data_len: int
    start: int  # stream offset of the first data byte
    pos: int  # file position of the record

    @property
    def meta_pos(self) -> int:
        return self.pos + HEAD.size

    @property
    def lengths_pos(self) -> int:
        return self.meta_pos + self.meta_len

    @property
    def data_pos(self) -> int:
        return self.lengths_pos + LENGTH.size * self.count

    @property
    def end_pos(self) -> int:
        return self.data_pos + self.data_len + TRAIL.size

    @property
    def size(self) -> int:
        return self.end_pos - self.pos

    @property
    def prefix_len(self) -> int:
        """Bytes from the record's start to its data (head, meta, lengths)."""
        return self.data_pos - self.pos


def encode(
    kind: Kind, flags: Flag, start: int, meta: bytes, messages: Sequence[bytes]
) -> tuple[bytes, int]:
    """One record's bytes, and its CRC."""
    lengths = []
    for message in messages:
        if len(message) > _MAX_U32:
            raise PayloadTooLarge("a single message must be smaller than 4 GiB")
        lengths.append(len(message))
    data = b"".join(messages)
    head = HEAD.pack(MAGIC, kind, flags, len(meta), len(lengths), len(data), start)
    table = struct.pack(f"<{len(lengths)}I", *lengths)
    crc = zlib.crc32(data, zlib.crc32(table, zlib.crc32(meta, zlib.crc32(head))))
    size = len(head) + len(meta) + len(table) + len(data) + TRAIL.size
    return b"".join((head, meta, table, data, TRAIL.pack(crc, size, END_MAGIC))), crc


def parse_head(buf: bytes | memoryview, pos: int) -> Head:
    """The head at the start of ``buf`` (read from file position ``pos``)."""
    if len(buf) < HEAD.size:
        raise CorruptRecord("short head")
    magic, kind, flags, meta_len, count, data_len, start = HEAD.unpack_from(buf)
    if magic != MAGIC or kind not in Kind.__members__.values():
        raise CorruptRecord("bad head")
    head = Head(Kind(kind), Flag(flags), meta_len, count, data_len, start, pos)
    if head.size > MAX_RECORD:
        raise CorruptRecord("impossible length")
    return head


def lengths(prefix: bytes | memoryview, head: Head) -> tuple[int, ...]:
    """Message lengths from a record's prefix (its bytes up to the data)."""
    at = head.lengths_pos - head.pos
    return struct.unpack_from(f"<{head.count}I", prefix, at)


def meta(prefix: bytes | memoryview, head: Head) -> bytes:
    at = head.meta_pos - head.pos
    return bytes(prefix[at : at + head.meta_len])


def verify(record: bytes | memoryview, head: Head) -> int:
    """Check a whole record's lengths, trail and CRC; return the CRC."""
    if len(record) != head.size:
        raise CorruptRecord("short record")
    crc, size, magic = TRAIL.unpack_from(record, head.size - TRAIL.size)
    if magic != END_MAGIC or size != head.size:
        raise CorruptRecord("bad trail")
    body = memoryview(record)[: head.size - TRAIL.size]
    if zlib.crc32(body) != crc:
        raise CorruptRecord("checksum mismatch")
    if sum(lengths(record, head)) != head.data_len:
        raise CorruptRecord("message lengths do not add up")
    return int(crc)


def parse_trail(buf: bytes) -> tuple[int, int]:
    """(crc, record size) from the 16 bytes that end a record."""
    if len(buf) != TRAIL.size:
        raise CorruptRecord("short trail")
    crc, size, magic = TRAIL.unpack(buf)
    if magic != END_MAGIC:
        raise CorruptRecord("bad trail")
    return int(crc), int(size)

"""Where each data record of a log starts: stream offset → file position, in O(log n).

Built lazily, the first time a stream is read after start-up: loaded from
its side file (``{stream_id}.idx``) when that still matches the log, then
completed by walking the record heads after it. The side file is only a
cache, written now and then by the checkpointer (tmp + rename); a stale or
damaged one is ignored and the index rebuilt from the log.
"""

from __future__ import annotations

import os
import struct
import zlib
from array import array
from bisect import bisect_right
from typing import TYPE_CHECKING

from ds_server.stores._file import segment

if TYPE_CHECKING:
    from pathlib import Path

# magic, log generation, covered end position, its CRC, arrays CRC, count
_HEADER = struct.Struct("<4sIQIIQ")
_MAGIC = b"DSIX"


class RecordIndex:
    """Data records in stream order: first data offset and file position of each."""

    __slots__ = ("end_crc", "end_pos", "generation", "positions", "saved", "starts")

    def __init__(self, generation: int = 0) -> None:
        self.generation = generation  # of the log file it indexes
        self.starts = array("q")
        self.positions = array("q")
        # The log prefix this index covers, and the CRC of its last record.
        self.end_pos = 0
        self.end_crc = 0
        self.saved = 0  # records in the side file

    def __len__(self) -> int:
        return len(self.starts)

    def add(self, start: int, pos: int) -> None:
        # Positions first: a reader bisecting ``starts`` may then use the entry at once.
        self.positions.append(pos)
        self.starts.append(start)

    def advance(self, end_pos: int, end_crc: int) -> None:
        self.end_pos = end_pos
        self.end_crc = end_crc

    def locate(self, offset: int) -> int:
        """The record holding ``offset`` (the last starting at or before it), or -1."""
        return bisect_right(self.starts, offset) - 1

    def extend_from_log(self, fd: int, end_pos: int, end_crc: int) -> None:
        """Index the records between what is covered and ``end_pos``."""
        for head in segment.heads(fd, self.end_pos, end_pos):
            if head.data_len:
                self.add(head.start, head.pos)
        self.advance(end_pos, end_crc)

    def snapshot(self) -> RecordIndex:
        """A copy that later appends do not change (take it on the event loop)."""
        copy = RecordIndex(self.generation)
        copy.starts = self.starts[:]
        copy.positions = self.positions[: len(copy.starts)]
        copy.advance(self.end_pos, self.end_crc)
        return copy

    def rebased(
        self, generation: int, first: int, delta: int, end_pos: int, end_crc: int
    ) -> RecordIndex:
        """The index of a rewritten log: records from ``first`` on, moved by ``delta`` bytes."""
        index = RecordIndex(generation)
        index.starts = self.starts[first:]
        index.positions = array("q", (pos + delta for pos in self.positions[first:]))
        index.advance(end_pos, end_crc)
        return index

    def save(self, path: Path) -> None:
        """Write the side file (tmp + rename; a cache, so no fsync); use a snapshot."""
        body = self.starts.tobytes() + self.positions.tobytes()
        header = _HEADER.pack(
            _MAGIC, self.generation, self.end_pos, self.end_crc, zlib.crc32(body), len(self)
        )
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(header + body)
        os.replace(tmp, path)
        self.saved = len(self)

    @classmethod
    def load(cls, fd: int, path: Path, generation: int, log_end: int) -> RecordIndex:
        """The side file's index if it matches the log ``fd`` (``log_end`` long), else empty."""
        index = cls(generation)
        try:
            raw = path.read_bytes()
            magic, saved_generation, end_pos, end_crc, body_crc, count = _HEADER.unpack_from(raw)
        except (OSError, struct.error):
            return index
        body = memoryview(raw)[_HEADER.size :]
        width = index.starts.itemsize
        if (
            magic != _MAGIC
            or saved_generation != generation
            or len(body) != 2 * width * count
            or zlib.crc32(body) != body_crc
            or end_pos > log_end
            or segment.trail_crc(fd, end_pos) != end_crc
        ):
            return index
        index.starts.frombytes(body[: width * count])
        index.positions.frombytes(body[width * count :])
        index.advance(end_pos, end_crc)
        index.saved = count
        return index

"""Reading chunks back out of a log through its record index (run in a worker thread)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ds_server.stores._chunks import ChunkCutter
from ds_server.stores._file import records
from ds_server.stores._file.segment import Reader

if TYPE_CHECKING:
    from ds_server.stores._file.index import RecordIndex
    from ds_server.stores.persistence import Chunk


def read_chunks(
    fd: int, index: RecordIndex, start: int, limit: int, max_bytes: int, whole: bool
) -> list[Chunk]:
    """Chunks overlapping ``[start, limit)``, as ``Persistence.read`` promises.

    One chunk per stored message, cut by ``ChunkCutter``. Small records come
    from one shared read window, so a page of small messages costs a few
    syscalls.
    """
    reader = Reader(fd, end=index.end_pos)
    cutter = ChunkCutter(start, limit, max_bytes, whole=whole)
    record = max(0, index.locate(start))
    count = len(index)
    while record < count and cutter.wants(index.starts[record]):
        head = reader.head(index.positions[record])
        record += 1
        message_start, pos = head.start, head.data_pos
        for length in records.lengths(reader.prefix(head), head):
            span = cutter.span(message_start, length)
            if span is None:
                return cutter.chunks()
            cut_from, cut_to = span
            if cut_from < cut_to:
                # Only the span is read: a page of a large append costs the page.
                cutter.keep(message_start, cut_from, reader.read(pos + cut_from, cut_to - cut_from))
            message_start += length
            pos += length
    return cutter.chunks()


def boundary_in_index(index: RecordIndex, position: int) -> bool | None:
    """Whether a message starts at ``position``, if the index alone can tell."""
    record = index.locate(position)
    if record < 0:
        return False
    if index.starts[record] == position:
        return True
    return None  # inside a record: its message lengths tell


def boundary_in_record(fd: int, index: RecordIndex, position: int) -> bool:
    """True when a message of the record holding ``position`` starts exactly there."""
    record = index.locate(position)
    if record < 0:
        return False
    reader = Reader(fd, window=16 * 1024)  # just the head and the message lengths
    head = reader.head(index.positions[record])
    message_start = head.start
    for length in records.lengths(reader.prefix(head), head):
        if message_start >= position:
            break
        message_start += length
    return message_start == position

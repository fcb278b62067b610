"""Reading chunks back out of a log through its record index (run in a worker thread)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ds_server.stores._file import records
from ds_server.stores._file.segment import Reader
from ds_server.stores.persistence import Chunk

if TYPE_CHECKING:
    from ds_server.stores._file.index import RecordIndex


def read_chunks(
    fd: int, index: RecordIndex, start: int, limit: int, max_bytes: int, whole: bool
) -> list[Chunk]:
    """Chunks overlapping ``[start, limit)``, as ``Persistence.read`` promises.

    One chunk per stored message, cut to the range; for byte streams
    (not ``whole``) also to the byte budget. Small records come from one
    shared read window, so a page of small messages costs a few syscalls.
    """
    reader = Reader(fd, end=index.end_pos)
    out: list[Chunk] = []
    budget = max_bytes
    record = max(0, index.locate(start))
    count = len(index)
    while record < count and index.starts[record] < limit and budget > 0:
        head = reader.head(index.positions[record])
        record += 1
        message_start, pos = head.start, head.data_pos
        for length in records.lengths(reader.prefix(head), head):
            if message_start >= limit or budget <= 0:
                break
            if message_start + length > start:
                # Always within the range (a fork's limit may fall inside a
                # message); byte streams are also cut to the budget.
                cut_from = max(0, start - message_start)
                cut_to = min(length, limit - message_start)
                if not whole:
                    cut_to = min(cut_to, cut_from + budget)
                data = reader.read(pos + cut_from, cut_to - cut_from)
                out.append(Chunk(message_start + cut_from, data))
                budget -= len(data)
            message_start += length
            pos += length
    return out


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

"""Start-up repair of one log: trust the checkpoint if it matches, replay the rest, cut a torn tail.

The log is the source of truth. A catalog checkpoint says "at file position
P, whose record has CRC c, the stream's state was S"; it is used only when
the log still ends a record at P with that CRC (one 16-byte read), so a
checkpoint never outlives the bytes it describes. Records after P are
replayed, each checked (length, trail, CRC, and that it continues the
stream's offsets); the first one that fails marks a torn tail, and the log
is truncated there. Without a usable checkpoint the whole log is replayed
from its CREATE record; a log without an intact CREATE record never
finished being created and is deleted.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

import msgspec

from ds_server.stores._file import codec, segment
from ds_server.stores._file.records import Flag, Kind

if TYPE_CHECKING:
    from ds_server.stores._file.codec import Entry
    from ds_server.stores._file.segment import Scanned
    from ds_server.stores._rules import StreamState


@dataclass(frozen=True, slots=True)
class Recovered:
    state: StreamState
    end_pos: int  # where the intact log ends (its length after repair)
    last_crc: int  # CRC of the log's last record
    replayed: int  # records replayed after the checkpoint
    truncated: int  # bytes of torn tail cut off
    synced: bool  # the log is known to be on disk up to ``end_pos``


def trusted(entry: Entry, size: int, generation: int, *, clean: bool) -> Recovered | None:
    """The checkpoint's state without reading the log, when that is safe.

    It is when the log is the checkpointed file, with exactly the
    checkpointed length, and either the checkpoint was taken after an fsync
    up to there, or a clean shutdown wrote it (every write had completed).
    """
    checkpoint = entry.checkpoint
    if (
        size != checkpoint.end_pos
        or generation != checkpoint.generation
        or not (clean or checkpoint.synced)
    ):
        return None
    return Recovered(codec.restore(entry), size, checkpoint.last_crc, 0, 0, checkpoint.synced)


def recover(
    path: str, stream_id: str, entry: Entry | None, generation: int, *, durable: bool
) -> Recovered | None:
    """Repair ``path`` and return its stream's state, or None if it holds no stream.

    A durable log is fsynced afterwards: what a crash left in the page cache
    was never acknowledged, but once served after the restart it must not
    vanish in a later power cut.
    """
    fd = os.open(path, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
    try:
        size = os.fstat(fd).st_size
        state: StreamState | None = None
        pos, crc, replayed = 0, 0, 0
        if entry is not None and entry.checkpoint.generation == generation:
            checkpoint = entry.checkpoint
            if (
                checkpoint.end_pos <= size
                and segment.trail_crc(fd, checkpoint.end_pos) == checkpoint.last_crc
            ):
                state = codec.restore(entry)
                pos, crc = checkpoint.end_pos, checkpoint.last_crc
        for scanned in segment.scan(fd, pos, size):
            head = scanned.head
            try:
                state = _replay(state, stream_id, scanned)
            except (msgspec.MsgspecError, _Discontinuous):
                break
            pos, crc = head.end_pos, scanned.crc
            replayed += 1
        if state is None:
            return None
        if pos < size:
            segment.truncate(fd, pos)
        if durable:
            os.fsync(fd)
        return Recovered(state, pos, crc, replayed, size - pos, durable)
    finally:
        os.close(fd)


class _Discontinuous(ValueError):
    """An intact record that does not continue the stream: treated as a torn tail."""


def _replay(state: StreamState | None, stream_id: str, scanned: Scanned) -> StreamState:
    head = scanned.head
    if state is None:
        if head.kind is Kind.BASE:
            # A rewritten log: its BASE record holds the state where the kept records start.
            state = codec.restore(codec.entry_decoder.decode(scanned.meta))
            if state.stream_id != stream_id:
                raise _Discontinuous()
            state.tail = head.start
            state.earliest_offset = max(state.earliest_offset, head.start)
            return state
        if head.kind is not Kind.CREATE:
            raise _Discontinuous()
        state = codec.new_state(stream_id, codec.config_decoder.decode(scanned.meta))
        if head.start != state.fork_offset:
            raise _Discontinuous()
        state.tail += head.data_len
        state.closed = Flag.CLOSE in head.flags
    elif head.kind is Kind.APPEND:
        if head.start != state.tail:
            raise _Discontinuous()
        meta = codec.append_decoder.decode(scanned.meta)
        codec.apply_append(state, meta, head.data_len, Flag.CLOSE in head.flags)
    elif head.kind is Kind.STATE:
        state.soft_deleted = codec.state_decoder.decode(scanned.meta).soft_deleted
    else:
        raise _Discontinuous()
    return state

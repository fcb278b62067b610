"""Reading one slice of a stream into rows of the event schema (sessions.md §2)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
from durable_sessions.protocol.offsets import format_offset
from durable_sessions.sessions.fields import fields_of

from ds_spark.errors import StreamError

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from datetime import datetime

    from durable_sessions.server import StreamServer

    from ds_spark.sources.plan import StreamSlice

# stream, offset, event_index, type, key, operation, event_time, payload
EventRow = tuple[str, str, int, str | None, str | None, str | None, "datetime | None", str]
SNAPSHOT_INDEX = -1
"""The snapshot's row sorts before the messages at its offset: event_index -1."""

_decoder = msgspec.json.Decoder()


def read_slice(api: StreamServer, piece: StreamSlice) -> Iterator[EventRow]:
    """The slice's rows in stream order: the snapshot first if asked for, then each message."""
    if piece.start is None:
        with api.bootstrap(piece.path) as boot:
            if piece.with_snapshot and boot.snapshot is not None:
                yield snapshot_row(piece.path, boot.start, boot.snapshot)
            yield from _batch_rows(piece.path, boot.start, boot.messages, piece.end)
        return
    if piece.with_snapshot:
        yield snapshot_row(piece.path, piece.start, api.snapshot(piece.path, piece.start))
    position = piece.start
    while position < piece.end:
        read = api.read(piece.path, position)
        if read.next_offset - read.start != sum(len(m) for m in read.messages):
            raise StreamError(
                f"stream {piece.path}: offsets do not count message bytes; cannot read by range"
            )
        if not read.messages:
            raise StreamError(
                f"stream {piece.path} ends at {format_offset(position)}, "
                f"before {format_offset(piece.end)}"
            )
        yield from _batch_rows(piece.path, read.start, read.messages, piece.end)
        position = read.next_offset


def message_row(path: str, batch_start: str, index: int, raw: bytes) -> EventRow:
    """The row of one message: its §2 fields and the message itself as JSON text."""
    try:
        message: Any = _decoder.decode(raw)
    except msgspec.DecodeError:
        raise StreamError(f"stream {path} holds a message that is not JSON") from None
    fields = fields_of(message)
    payload = raw.decode("utf-8", "replace")
    return (
        path,
        batch_start,
        index,
        fields.type,
        fields.key,
        fields.operation,
        fields.time,
        payload,
    )


def snapshot_row(path: str, position: int, blob: bytes) -> EventRow:
    """The snapshot as a row of its own: at its offset, index -1, no type, key or time."""
    try:
        _decoder.decode(blob)
    except msgspec.DecodeError:
        raise StreamError(f"stream {path} has a snapshot that is not JSON") from None
    return (path, format_offset(position), SNAPSHOT_INDEX, None, None, None, None, blob.decode())


def _batch_rows(path: str, start: int, messages: Iterable[bytes], end: int) -> Iterator[EventRow]:
    """Rows of one read's messages (``offset`` is the read's start), stopping at ``end``."""
    batch_start = format_offset(start)
    position = start
    for index, raw in enumerate(messages):
        if position >= end:
            return
        yield message_row(path, batch_start, index, raw)
        position += len(raw)

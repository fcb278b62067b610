"""The body of an SSE read: catch-up data, then live data, each paired with a control event."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ds_server.live import IdleWait, Wake
from ds_server.protocol.cursor import next_cursor
from ds_server.protocol.json_mode import is_json_content_type, wrap_messages
from ds_server.protocol.offsets import format_offset
from ds_server.protocol.sse import KEEPALIVE, control_event, data_event
from ds_server.routes._fanout import Tails, join_tail
from ds_server.stores.errors import StoreError

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from ds_server.edge.http import SendSlot
    from ds_server.live import Change
    from ds_server.settings import ServerSection
    from ds_server.stores.base import ReadResult, Store

# Streams with a shared frame at once; a full table simply starts over.
_MAX_SHARED_FRAMES = 10_000


@dataclass(slots=True)
class SseReads:
    """What every SSE read of a server shares: its store and settings, frames, tail groups."""

    store: Store
    settings: ServerSection
    frames: SharedFrames
    tails: Tails


async def sse_events(
    sse: SseReads,
    name: str,
    first: ReadResult,
    *,
    cursor: str | None,
    base64_encoded: bool,
    slot: SendSlot | None = None,
    token_secs: float | None = None,
) -> AsyncIterator[bytes]:
    """Yield SSE frames until the stream closes, is deleted, or the connection's life ends.

    Its life is the reconnect interval, or what is left of the reader's
    token (``token_secs``) when that is shorter.
    """
    settings = sse.settings
    interval = settings.sse_reconnect_interval_secs
    json_mode = is_json_content_type(first.info.content_type)
    live = sse.store.live
    lifetime = interval if interval > 0 else None
    if token_secs is not None:
        lifetime = token_secs if lifetime is None else min(lifetime, token_secs)
    idle = IdleWait(settings.sse_keepalive_secs, lifetime)
    result = first
    frame = _frame(result, cursor, json_mode=json_mode, base64_encoded=base64_encoded)

    def tail_frame(result: ReadResult) -> bytes:
        return _frame(result, None, json_mode=json_mode, base64_encoded=base64_encoded)

    # The change that was current when ``result`` was read: while it has not
    # fired, the stream is as that read saw it.
    read_at: Change | None = None
    # Where the server tells, the reader ends as soon as its client is gone
    # (SendSlot: the dispatcher then watches for nothing itself).
    connection = slot.connection if slot is not None else None
    if connection is not None:
        connection.on_lost(idle.end)
    try:
        while True:
            yield frame
            idle.active()
            # At the end of its life (reconnect interval, token expiry) even a
            # busy stream's connection ends, right after a frame, so the
            # client resumes from its offset.
            if result.at_closed_end or idle.expired:
                return
            position = result.next_offset
            while True:
                changed = live.next_change(name)
                if changed is not read_at or not result.up_to_date:
                    shared = sse.frames.get(name, changed, position, base64_encoded)
                    if shared is not None and cursor is None:
                        result, frame = shared
                        read_at = changed
                        break
                    try:
                        result = await sse.store.read(name, position, settings.read_chunk_bytes)
                    except StoreError:
                        return  # deleted or expired while we were streaming
                    read_at = changed
                    if result.chunks or result.info.closed:
                        frame = _frame(
                            result, cursor, json_mode=json_mode, base64_encoded=base64_encoded
                        )
                        if cursor is None:
                            sse.frames.put(name, changed, position, base64_encoded, result, frame)
                        break
                member = None
                if slot is not None and cursor is None and result.up_to_date:
                    send, connection = slot.send, slot.connection
                    # Only a connection that says when it would block can join:
                    # the group must never wait for one client.
                    if send is not None and connection is not None:
                        member = join_tail(
                            sse.tails,
                            name,
                            base64_encoded,
                            position,
                            tail_frame,
                            send,
                            connection,
                            idle,
                        )
                if member is None:
                    woke = await idle.wait(changed)
                else:
                    # Sleep while the stream's group writes to this client.
                    try:
                        woke = await idle.wait_for(member.done)
                    finally:
                        member.leave()
                    if woke is Wake.CLOSED:
                        return  # the group sent the closing frame
                    if member.position != position:
                        position = member.position
                        read_at = None  # go on from there with a read of our own
                if woke is Wake.EXPIRED:
                    return
                if woke is Wake.KEEPALIVE:
                    yield KEEPALIVE
                    idle.active()
    finally:
        if connection is not None:
            connection.on_lost(None)
        idle.close()


def _frame(
    result: ReadResult, cursor: str | None, *, json_mode: bool, base64_encoded: bool
) -> bytes:
    """The data event (when there is data) and its control event."""
    if not result.chunks:
        return _control(result, cursor)
    payload = wrap_messages(result.chunks) if json_mode else b"".join(result.chunks)
    return data_event(payload, base64_encoded=base64_encoded) + _control(result, cursor)


class SharedFrames:
    """The latest SSE frame per stream, so many subscribers at one offset share one read.

    An entry is keyed by the stream's wake-up event as it was when the read
    was made: while that event has not fired, nothing changed, and the
    frame is exactly what another read would produce.
    """

    def __init__(self) -> None:
        self._frames: dict[str, tuple[Change, int, bool, ReadResult, bytes]] = {}

    def get(
        self, name: str, changed: Change, position: int, base64_encoded: bool
    ) -> tuple[ReadResult, bytes] | None:
        entry = self._frames.get(name)
        if entry is None:
            return None
        event, at, encoded, result, frame = entry
        if event is not changed or event.fired or at != position or encoded != base64_encoded:
            return None
        return result, frame

    def put(
        self,
        name: str,
        changed: Change,
        position: int,
        base64_encoded: bool,
        result: ReadResult,
        frame: bytes,
    ) -> None:
        if changed.fired:
            return  # already out of date
        if len(self._frames) >= _MAX_SHARED_FRAMES:
            self._frames.clear()
        self._frames[name] = (changed, position, base64_encoded, result, frame)


def _control(result: ReadResult, cursor: str | None) -> bytes:
    return control_event(
        format_offset(result.next_offset),
        cursor=next_cursor(cursor),
        up_to_date=result.up_to_date,
        closed=result.at_closed_end,
    )

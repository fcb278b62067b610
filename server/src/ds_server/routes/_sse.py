"""The body of an SSE read: catch-up data, then live data, each paired with a control event."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ds_server.protocol.cursor import next_cursor
from ds_server.protocol.json_mode import is_json_content_type, wrap_messages
from ds_server.protocol.offsets import format_offset
from ds_server.protocol.sse import KEEPALIVE, control_event, data_event
from ds_server.stores.errors import StoreError

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from ds_server.routes._context import ServerContext
    from ds_server.stores.base import ReadResult

# A comment line this often keeps proxies from closing a quiet connection.
_KEEPALIVE_SECS = 15.0


async def sse_events(
    ctx: ServerContext,
    name: str,
    first: ReadResult,
    *,
    cursor: str | None,
    base64_encoded: bool,
) -> AsyncIterator[bytes]:
    """Yield SSE frames until the stream closes, is deleted, or the reconnect interval ends."""
    settings = ctx.settings.server
    interval = settings.sse_reconnect_interval_secs
    deadline = time.monotonic() + interval if interval > 0 else None
    json_mode = is_json_content_type(first.info.content_type)
    live = ctx.store.live
    result = first
    while True:
        if result.chunks:
            payload = wrap_messages(result.chunks) if json_mode else b"".join(result.chunks)
            yield data_event(payload, base64_encoded=base64_encoded) + _control(result, cursor)
        else:
            yield _control(result, cursor)
        if result.at_closed_end:
            return
        position = result.next_offset
        while True:
            changed = live.changed_event(name)
            try:
                result = await ctx.store.read(name, position, settings.read_chunk_bytes)
            except StoreError:
                return  # deleted or expired while we were streaming
            if result.chunks or result.info.closed:
                break
            wait = _KEEPALIVE_SECS
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                wait = min(wait, remaining)
            if not await live.wait(changed, wait):
                yield KEEPALIVE


def _control(result: ReadResult, cursor: str | None) -> bytes:
    return control_event(
        format_offset(result.next_offset),
        cursor=next_cursor(cursor),
        up_to_date=result.up_to_date,
        closed=result.at_closed_end,
    )

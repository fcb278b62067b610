"""Reads: catch-up, long-poll and SSE (protocol sections 5.6-5.8)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ds_server.auth.live_reads import token_expires_at
from ds_server.edge.http import Reply, SendSlot
from ds_server.protocol import headers as h
from ds_server.protocol.cursor import next_cursor
from ds_server.protocol.etag import matches, read_etag
from ds_server.protocol.json_mode import is_json_content_type, wrap_messages
from ds_server.protocol.offsets import Sentinel, format_offset
from ds_server.protocol.sse import uses_base64
from ds_server.routes._request import parse_read_query
from ds_server.routes._sse import sse_events

if TYPE_CHECKING:
    from ds_server.edge.http import HttpRequest
    from ds_server.routes._context import ServerContext
    from ds_server.stores.base import ReadResult


CATCH_UP_CACHE = "public, max-age=60, stale-while-revalidate=300"


async def read(ctx: ServerContext, request: HttpRequest, name: str) -> Reply:
    """GET on a stream of either surface: catch-up, long-poll or SSE."""
    query = parse_read_query(request.query_string)
    offset = Sentinel.BEGINNING if query.offset is None else query.offset
    if query.live is not None:
        # Behind the gateway a live read ends when its token does (auth/live_reads.py).
        token_secs = _token_secs_left(request)
        if query.live == "sse":
            return await _sse(ctx, name, offset, query.cursor, token_secs)
        return await _long_poll(ctx, name, offset, query.cursor, token_secs)
    result = await ctx.store.read(name, offset, ctx.settings.server.read_chunk_bytes)
    headers = _read_headers(result)
    if offset is Sentinel.NOW:
        headers[h.CACHE_CONTROL] = "no-store"
        return Reply(200, headers, _body(result))
    etag = read_etag(
        result.info.stream_id,
        format_offset(result.start),
        format_offset(result.next_offset),
        closed=result.at_closed_end,
    )
    headers[h.ETAG] = etag
    headers[h.CACHE_CONTROL] = CATCH_UP_CACHE
    if matches(request.headers.get(h.IF_NONE_MATCH), etag):
        return Reply(304, {h.ETAG: etag})
    return Reply(200, headers, _body(result))


def _token_secs_left(request: HttpRequest) -> float | None:
    expires_at = token_expires_at(request.scope)
    return None if expires_at is None else max(0.0, expires_at - time.time())


async def _long_poll(
    ctx: ServerContext,
    name: str,
    offset: int | Sentinel,
    cursor: str | None,
    token_secs: float | None,
) -> Reply:
    chunk = ctx.settings.server.read_chunk_bytes
    wait_secs = ctx.settings.server.long_poll_timeout_secs
    if token_secs is not None:
        wait_secs = min(wait_secs, token_secs)
    deadline = time.monotonic() + wait_secs
    position: int | Sentinel = offset
    while True:
        changed = ctx.store.live.next_change(name)
        result = await ctx.store.read(name, position, chunk)
        if result.chunks:
            headers = _read_headers(result)
            headers[h.STREAM_CURSOR] = next_cursor(cursor)
            return Reply(200, headers, _body(result))
        # Waiting from "now" means waiting from the tail as it is now.
        position = result.next_offset
        remaining = deadline - time.monotonic()
        if result.info.closed or remaining <= 0:
            headers = _read_headers(result)
            if not result.info.closed:
                headers[h.STREAM_CURSOR] = next_cursor(cursor)
            return Reply(204, headers)
        await ctx.store.live.wait(changed, remaining)


async def _sse(
    ctx: ServerContext,
    name: str,
    offset: int | Sentinel,
    cursor: str | None,
    token_secs: float | None,
) -> Reply:
    # Read once before answering so a missing stream or bad offset is a plain 4xx.
    first = await ctx.store.read(name, offset, ctx.settings.server.read_chunk_bytes)
    headers = {
        h.CACHE_CONTROL: "no-cache",
        "Connection": "keep-alive",
        "X-Accel-Buffering": "no",
    }
    base64_encoded = uses_base64(first.info.content_type)
    if base64_encoded:
        headers[h.STREAM_SSE_DATA_ENCODING] = "base64"
    slot = SendSlot()
    events = sse_events(
        ctx.sse,
        name,
        first,
        cursor=cursor,
        base64_encoded=base64_encoded,
        slot=slot,
        token_secs=token_secs,
    )
    headers[h.CONTENT_TYPE] = "text/event-stream"
    return Reply(200, headers, stream=events, send_slot=slot)


def _read_headers(result: ReadResult) -> dict[str, str]:
    headers = {
        h.CONTENT_TYPE: result.info.content_type,
        h.STREAM_NEXT_OFFSET: format_offset(result.next_offset),
    }
    if result.up_to_date:
        headers[h.STREAM_UP_TO_DATE] = h.TRUE
    if result.at_closed_end:
        headers[h.STREAM_CLOSED] = h.TRUE
    return headers


def _body(result: ReadResult) -> bytes:
    if is_json_content_type(result.info.content_type):
        return wrap_messages(result.chunks)
    return b"".join(result.chunks)

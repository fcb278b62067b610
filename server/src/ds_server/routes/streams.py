"""Stream lifecycle: create (PUT), append and close (POST), metadata (HEAD), delete (DELETE)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ds_server import metrics
from ds_server.edge.http import Reply
from ds_server.edge.references import fork_source_name
from ds_server.edge.surfaces import bucket_route
from ds_server.protocol import headers as h
from ds_server.protocol.errors import BadRequest
from ds_server.protocol.expiry import InvalidExpiryError, parse_expires_at, parse_ttl
from ds_server.protocol.json_mode import InvalidJsonError, is_json_content_type, split_messages
from ds_server.protocol.offsets import InvalidOffsetError, format_offset, parse_fork_offset
from ds_server.routes._request import producer_claim, stream_seq
from ds_server.routes._responses import metadata_headers
from ds_server.stores.base import (
    AppendOutcome,
    AppendRequest,
    CreateRequest,
    Expiry,
    ForkSpec,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ds_server.edge.http import HttpRequest
    from ds_server.routes._context import ServerContext

DEFAULT_CONTENT_TYPE = "application/octet-stream"
_FORKED_FROM = h.STREAM_FORKED_FROM.encode()


async def create(ctx: ServerContext, request: HttpRequest, name: str) -> Reply:
    """PUT on a stream of either surface."""
    headers = request.headers
    content_type = headers.get(h.CONTENT_TYPE)
    fork = _fork_spec(request)
    if fork is None and not content_type:
        content_type = DEFAULT_CONTENT_TYPE
    body = await request.body(ctx.settings.limits.max_retained_bytes)
    messages = _split(body, content_type, allow_empty_array=True)
    result = await ctx.store.create(
        CreateRequest(
            path=name,
            content_type=content_type or None,
            expiry=_expiry(headers),
            closed=h.is_true(headers.get(h.STREAM_CLOSED)),
            messages=messages,
            fork=fork,
        )
    )
    response_headers = metadata_headers(result.info)
    status = 201 if result.created else 200
    if result.created:
        response_headers[h.LOCATION] = request.url()
    if result.created and messages:
        metrics.appended(messages)
        ctx.events.data_arrived(name)
    return Reply(status, response_headers)


async def append(ctx: ServerContext, request: HttpRequest, name: str) -> Reply:
    """POST on a stream of either surface."""
    headers = request.headers
    claim = producer_claim(headers)
    close = h.is_true(headers.get(h.STREAM_CLOSED))
    seq = stream_seq(headers)
    body = await request.body(ctx.settings.limits.max_retained_bytes)
    if not body and not close:
        raise BadRequest("an append needs a body (or Stream-Closed: true)")
    content_type = headers.get(h.CONTENT_TYPE) if body else None
    if body and not content_type:
        raise BadRequest("Content-Type is required when appending data")
    messages = _split(body, content_type, allow_empty_array=False)
    result = await ctx.store.append(
        AppendRequest(
            path=name,
            content_type=content_type,
            messages=messages,
            close=close,
            stream_seq=seq,
            writer=headers.get(h.WRITER_IDENTITY) or "",
            producer=claim,
        )
    )
    response_headers = {h.STREAM_NEXT_OFFSET: format_offset(result.tail)}
    if result.closed:
        response_headers[h.STREAM_CLOSED] = h.TRUE
    if result.producer_epoch is not None:
        response_headers[h.PRODUCER_EPOCH] = str(result.producer_epoch)
    if result.producer_seq is not None:
        response_headers[h.PRODUCER_SEQ] = str(result.producer_seq)
    if result.outcome is AppendOutcome.APPENDED:
        metrics.appended(messages)
        ctx.events.data_arrived(name)
        if claim is not None:
            return Reply(200, response_headers)
    return Reply(204, response_headers)


async def metadata(ctx: ServerContext, request: HttpRequest, name: str) -> Reply:
    """HEAD on a stream of either surface."""
    info = await ctx.store.head(name)
    response_headers = metadata_headers(info)
    response_headers[h.CACHE_CONTROL] = "no-store"
    return Reply(200, response_headers)


async def remove(ctx: ServerContext, request: HttpRequest, name: str) -> Reply:
    """DELETE on a stream of either surface."""
    await ctx.store.delete(name)
    ctx.events.stream_deleted(name)
    return Reply(204)


def _split(body: bytes, content_type: str | None, *, allow_empty_array: bool) -> tuple[bytes, ...]:
    if not body:
        return ()
    if content_type is not None and is_json_content_type(content_type):
        try:
            return tuple(split_messages(body, allow_empty_array=allow_empty_array))
        except InvalidJsonError as exc:
            raise BadRequest(str(exc)) from None
    return (body,)


def _expiry(headers: Mapping[str, str]) -> Expiry:
    ttl = headers.get(h.STREAM_TTL)
    expires_at = headers.get(h.STREAM_EXPIRES_AT)
    if ttl is not None and expires_at is not None:
        raise BadRequest("Stream-TTL and Stream-Expires-At are mutually exclusive")
    try:
        if ttl is not None:
            return Expiry(ttl_seconds=parse_ttl(ttl))
        if expires_at is not None:
            return Expiry(expires_at=parse_expires_at(expires_at))
    except InvalidExpiryError as exc:
        raise BadRequest(str(exc)) from None
    return Expiry()


def _fork_spec(request: HttpRequest) -> ForkSpec | None:
    headers = request.headers
    source = headers.get(h.STREAM_FORKED_FROM)
    offset_text = headers.get(h.STREAM_FORK_OFFSET)
    sub_text = headers.get(h.STREAM_FORK_SUB_OFFSET)
    if source is None:
        if offset_text is not None or sub_text is not None:
            raise BadRequest("fork offsets need Stream-Forked-From")
        return None
    scope = request.scope
    if sum(1 for name, _ in scope["headers"] if name.lower() == _FORKED_FROM) > 1:
        raise BadRequest("Stream-Forked-From must be given once")
    # Resolved exactly as authorization resolved it (auth/access.py).
    source_name = fork_source_name(source, bucket=bucket_route(scope["path"]))
    offset = None
    if offset_text is not None:
        try:
            offset = parse_fork_offset(offset_text)
        except InvalidOffsetError as exc:
            raise BadRequest(str(exc)) from None
    sub_offset = 0
    if sub_text is not None:
        if (
            not sub_text.isascii()
            or not sub_text.isdigit()
            or (len(sub_text) > 1 and sub_text[0] == "0")
        ):
            raise BadRequest("Stream-Fork-Sub-Offset must be a non-negative integer")
        sub_offset = int(sub_text)
    if sub_offset > 0 and offset is None:
        raise BadRequest("Stream-Fork-Sub-Offset needs Stream-Fork-Offset")
    return ForkSpec(source=source_name, offset=offset, sub_offset=sub_offset)

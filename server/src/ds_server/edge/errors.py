"""Domain and request errors to HTTP responses, in one place.

``describe`` gives status, reason and headers; the edge uses it for the
stream operations' replies, Litestar's exception handlers for the rest.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from litestar import Request, Response
from litestar.exceptions import HTTPException

from ds_server.protocol import headers as h
from ds_server.protocol.errors import BadRequest
from ds_server.protocol.offsets import format_offset
from ds_server.stores import errors as e

if TYPE_CHECKING:
    from collections.abc import Mapping

    from litestar.types import ExceptionHandlersMap

log = logging.getLogger("ds_server")

AnyRequest = Request[Any, Any, Any]

_STATUS: Mapping[type[e.StoreError], int] = {
    e.StreamNotFound: 404,
    e.StreamExists: 409,
    e.StreamClosed: 409,
    e.ContentTypeMismatch: 409,
    e.SequenceConflict: 409,
    e.ProducerFenced: 403,
    e.SequenceGap: 409,
    e.InvalidProducerState: 400,
    e.PayloadTooLarge: 413,
    e.InvalidOffset: 400,
    e.OffsetGone: 410,
    e.InvalidFork: 400,
    e.StreamGone: 410,
    e.StorageFull: 507,
    e.QuotaExceeded: 507,
    e.QuotaRefused: 503,
    e.StorageUnavailable: 503,
    e.BucketNotFound: 404,
    e.BucketExists: 409,
    e.BucketNotEmpty: 409,
    e.SnapshotNotFound: 404,
    e.SnapshotConflict: 409,
    e.StaleStream: 503,
}


def _extra_headers(error: e.StoreError) -> dict[str, str]:
    if isinstance(error, e.StreamClosed):
        return {h.STREAM_CLOSED: h.TRUE, h.STREAM_NEXT_OFFSET: format_offset(error.tail)}
    if isinstance(error, (e.StaleStream, e.QuotaRefused)):
        return {"Retry-After": "1"}
    if isinstance(error, e.ProducerFenced):
        return {h.PRODUCER_EPOCH: str(error.current_epoch)}
    if isinstance(error, e.SequenceGap):
        return {
            h.PRODUCER_EXPECTED_SEQ: str(error.expected),
            h.PRODUCER_RECEIVED_SEQ: str(error.received),
        }
    return {}


def text_response(status: int, reason: str, headers: dict[str, str] | None = None) -> Response[str]:
    """A short plain-text error body."""
    return Response(
        content=reason + "\n",
        status_code=status,
        headers={h.CONTENT_TYPE: "text/plain; charset=utf-8", **(headers or {})},
    )


def describe(error: e.StoreError | BadRequest) -> tuple[int, str, dict[str, str]]:
    """Status, short reason and extra headers of a domain or request error."""
    if isinstance(error, BadRequest):
        return 400, str(error), {}
    return _STATUS.get(type(error), 400), error.reason, _extra_headers(error)


def _store_error(_: AnyRequest, error: e.StoreError) -> Response[str]:
    return text_response(*describe(error))


def _bad_request(_: AnyRequest, error: BadRequest) -> Response[str]:
    return text_response(400, str(error))


def _http_error(_: AnyRequest, error: HTTPException) -> Response[str]:
    return text_response(error.status_code, error.detail, dict(error.headers or {}))


def _unexpected(request: AnyRequest, error: Exception) -> Response[str]:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=error)
    return text_response(500, "internal error")


EXCEPTION_HANDLERS: ExceptionHandlersMap = {
    e.StoreError: _store_error,
    BadRequest: _bad_request,
    HTTPException: _http_error,
    Exception: _unexpected,
}

__all__: list[str] = ["EXCEPTION_HANDLERS", "describe", "text_response"]

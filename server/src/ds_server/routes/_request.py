"""Turning raw request parts into typed values; every malformed input becomes BadRequest."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import parse_qs

from ds_server.protocol import headers as h
from ds_server.protocol.errors import BadRequest
from ds_server.protocol.offsets import InvalidOffsetError, Sentinel, parse_offset
from ds_server.stores.base import ProducerClaim

if TYPE_CHECKING:
    from collections.abc import Mapping

_MAX_JS_INT = 2**53 - 1
_DECIMAL_RE = re.compile(r"0|[1-9][0-9]{0,15}")
_MAX_PRODUCER_ID = 256
_MAX_STREAM_SEQ = 256


LIVE_MODES = frozenset({"long-poll", "sse"})


@dataclass(frozen=True, slots=True)
class ReadQuery:
    offset: int | Sentinel | None
    live: str | None
    cursor: str | None


def parse_read_query(query_string: bytes) -> ReadQuery:
    """Parse ``offset``, ``live`` and ``cursor``; unknown parameters are ignored."""
    try:
        params = parse_qs(query_string.decode("latin-1"), keep_blank_values=True, errors="strict")
    except (UnicodeDecodeError, ValueError):
        raise BadRequest("malformed query string") from None
    offset_text = _single(params, "offset")
    live = _single(params, "live")
    cursor = _single(params, "cursor")
    if live is not None and live not in LIVE_MODES:
        raise BadRequest("live must be long-poll or sse")
    offset: int | Sentinel | None = None
    if offset_text is not None:
        try:
            offset = parse_offset(offset_text)
        except InvalidOffsetError as exc:
            raise BadRequest(str(exc)) from None
    if live is not None and offset is None:
        raise BadRequest(f"live={live} requires an offset")
    return ReadQuery(offset=offset, live=live, cursor=cursor)


def _single(params: dict[str, list[str]], name: str) -> str | None:
    values = params.get(name)
    if values is None:
        return None
    if len(values) != 1:
        raise BadRequest(f"{name} must be given once")
    if name == "offset" and values[0] == "":
        raise BadRequest("offset must not be empty")
    return values[0]


def producer_claim(headers: Mapping[str, str]) -> ProducerClaim | None:
    """The idempotent-producer triple, or None when none of its headers is present."""
    producer_id = headers.get(h.PRODUCER_ID)
    epoch = headers.get(h.PRODUCER_EPOCH)
    seq = headers.get(h.PRODUCER_SEQ)
    if producer_id is None and epoch is None and seq is None:
        return None
    if producer_id is None or epoch is None or seq is None:
        raise BadRequest("Producer-Id, Producer-Epoch and Producer-Seq go together")
    if not producer_id or len(producer_id) > _MAX_PRODUCER_ID:
        raise BadRequest("Producer-Id must be a non-empty string of at most 256 characters")
    return ProducerClaim(
        producer_id=producer_id,
        epoch=_js_int(epoch, "Producer-Epoch"),
        seq=_js_int(seq, "Producer-Seq"),
    )


def _js_int(text: str, name: str) -> int:
    if _DECIMAL_RE.fullmatch(text) is None or int(text) > _MAX_JS_INT:
        raise BadRequest(f"{name} must be a non-negative integer <= 2^53-1")
    return int(text)


def stream_seq(headers: Mapping[str, str]) -> str | None:
    """The Stream-Seq header, compared byte-wise by the store."""
    value = headers.get(h.STREAM_SEQ)
    if value is None:
        return None
    if not value or len(value) > _MAX_STREAM_SEQ:
        raise BadRequest("Stream-Seq must be a non-empty string of at most 256 characters")
    return value

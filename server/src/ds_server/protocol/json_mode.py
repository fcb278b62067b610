"""JSON mode (protocol section 7.1): one message per value, arrays flattened once.

Messages are stored as the exact bytes the client sent for each value, so
numbers and strings round-trip without re-serialisation.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from collections.abc import Sequence

JSON_CONTENT_TYPE = "application/json"


class InvalidJsonError(ValueError):
    """The body is not valid JSON, or is an empty array where one is not allowed."""


def split_messages(body: bytes, *, allow_empty_array: bool) -> list[bytes]:
    """Split a JSON body into stored messages, flattening one array level.

    ``allow_empty_array`` is true for creates (``[]`` creates an empty
    stream) and false for appends (``[]`` is a client bug, rejected).
    Values nested deeper than the decoder's recursion allows (about 900
    levels) are refused, not stored: no reader could decode them either.
    """
    try:
        return _split(body, allow_empty_array=allow_empty_array)
    except RecursionError:
        # msgspec counts nesting against Python's recursion limit.
        raise InvalidJsonError("invalid JSON: nested too deeply to decode") from None


def _split(body: bytes, *, allow_empty_array: bool) -> list[bytes]:
    try:
        # Full decode first: msgspec.Raw alone skips over nested values
        # without validating them.
        value = msgspec.json.decode(body)
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        raise InvalidJsonError(f"invalid JSON: {exc}") from None
    if not isinstance(value, list):
        return [bytes(msgspec.json.decode(body, type=msgspec.Raw))]
    if not value and not allow_empty_array:
        raise InvalidJsonError("empty JSON array appends nothing")
    return [bytes(raw) for raw in msgspec.json.decode(body, type=list[msgspec.Raw])]


def wrap_messages(messages: Sequence[bytes]) -> bytes:
    """Render stored messages as the JSON array a read returns."""
    return b"[" + b",".join(messages) + b"]"


def is_json_content_type(content_type: str) -> bool:
    """True for ``application/json`` with any parameters, in any case."""
    return media_type(content_type) == JSON_CONTENT_TYPE


# A server sees a handful of distinct content types; every append checks one.
@functools.lru_cache(maxsize=256)
def media_type(content_type: str) -> str:
    """The bare, lower-cased media type without parameters."""
    return content_type.split(";", 1)[0].strip().lower()

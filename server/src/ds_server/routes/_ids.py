"""Identifiers of the /ds surface (extensions section 1.1)."""

from __future__ import annotations

import re

from ds_server.routes._request import BadRequest

_BUCKET_RE = re.compile(r"[a-z0-9_-]{4,64}")
MAX_KEY_BYTES = 122
RESERVED_STREAM_ID = "streams"


def bucket_id(text: str) -> str:
    """A valid bucket id, or BadRequest."""
    if _BUCKET_RE.fullmatch(text) is None:
        raise BadRequest("bucket id must match ^[a-z0-9_-]{4,64}$")
    return text


def stream_name(bucket: str, stream_id: str) -> str:
    """The stream's name (``{bucket}/{stream_id}``) after checking the stream id."""
    try:
        size = len(stream_id.encode("utf-8"))
    except UnicodeEncodeError:
        raise BadRequest("stream id must be UTF-8") from None
    if not stream_id:
        raise BadRequest("stream id is empty")
    if size > MAX_KEY_BYTES:
        raise BadRequest(f"stream id exceeds {MAX_KEY_BYTES} bytes")
    if "/" in stream_id or "\x00" in stream_id or ".." in stream_id:
        raise BadRequest("stream id must not contain '/', NUL or '..'")
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in stream_id):
        raise BadRequest("stream id contains control characters")
    if stream_id == RESERVED_STREAM_ID:
        raise BadRequest("'streams' is reserved for the bucket listing")
    name = f"{bucket}/{stream_id}"
    if len(name.encode("utf-8")) > MAX_KEY_BYTES:
        raise BadRequest(f"bucket and stream id together exceed {MAX_KEY_BYTES} bytes")
    return name

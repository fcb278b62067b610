"""What a stream may be called: stream paths, bucket ids and bucket-local stream ids.

One validator per kind of name, used by every surface and feature that
accepts one (stream URLs, fork sources, subscription bodies), so a name is
valid in one place exactly when it is valid in all.
"""

from __future__ import annotations

import functools
import re

from ds_server.protocol.errors import BadRequest

MAX_PATH_BYTES = 1024
# The segment the server keeps for its own API (subscriptions): never a stream's.
RESERVED_SEGMENT = "__ds"
# Extensions section 1.1.
_BUCKET_RE = re.compile(r"[a-z0-9_-]{4,64}")
MAX_KEY_BYTES = 122
RESERVED_STREAM_ID = "streams"


# Busy streams are addressed again and again: validate each path once. Only
# valid paths are remembered (a BadRequest is not cached), at most this many.
@functools.lru_cache(maxsize=4096)
def stream_path(raw: str) -> str:
    """A valid stream path (``chat/room-1``), leading and trailing ``/`` removed."""
    path = raw.strip("/")
    if not path:
        raise BadRequest("stream path is empty")
    if len(path.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
        raise BadRequest("stream path is too long")
    if _has_control(path):
        raise BadRequest("stream path contains control characters")
    segments = path.split("/")
    if any(segment in ("", ".", "..") for segment in segments):
        raise BadRequest("stream path contains an empty, '.' or '..' segment")
    if RESERVED_SEGMENT in segments:
        raise BadRequest("stream path must not contain the reserved __ds segment")
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise BadRequest("stream path is not valid UTF-8") from None
    return path


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
    if _has_control(stream_id):
        raise BadRequest("stream id contains control characters")
    if stream_id == RESERVED_STREAM_ID:
        raise BadRequest("'streams' is reserved for the bucket listing")
    name = f"{bucket}/{stream_id}"
    if len(name.encode("utf-8")) > MAX_KEY_BYTES:
        raise BadRequest(f"bucket and stream id together exceed {MAX_KEY_BYTES} bytes")
    return name


def in_bucket(bucket: str, stream_id: str) -> bool:
    """Whether ``{bucket}/{stream_id}`` can be addressed as ``/ds/{bucket}/{stream_id}``."""
    try:
        stream_name(bucket, stream_id)
    except BadRequest:
        return False
    return True


def _has_control(text: str) -> bool:
    return any(ord(char) < 0x20 or ord(char) == 0x7F for char in text)

"""Stream references: how a request path or a header naming a stream becomes a stream name.

A stream has one name (``chat/room-1``) and two spellings on the wire:
``/v1/stream/chat/room-1`` and ``/ds/chat/room-1``. Authorization
(``auth/access.py``) and the operations both resolve every reference with
the functions here and nothing else, so what is authorized is always what
is served.

Fork sources (``Stream-Forked-From``) are paths, percent-encoded like a URL
path:

- ``/v1/stream/{path}`` and ``/ds/{bucket}/{stream}`` name a stream
  absolutely, on either surface;
- anything else is relative to the request's surface: on ``/v1/stream`` a
  stream path (``chat/room-1``), on ``/ds/{bucket}/...`` a stream id of the
  same bucket (``room-1``).
"""

from __future__ import annotations

from urllib.parse import unquote

from ds_server.routes._ids import bucket_id, stream_name
from ds_server.routes._request import BadRequest, stream_path

STREAM_PREFIX = "/v1/stream"
BUCKET_PREFIX = "/ds"
# A first segment starting with "__" is server-owned (``__ds``: subscriptions),
# never a tenant's bucket: only the wildcard scope reaches it.
RESERVED_MARK = "__"


def bucket_of_name(name: str) -> str | None:
    """The bucket of a stream name: its first segment, None when server-owned."""
    first = name.split("/", 1)[0]
    return None if first.startswith(RESERVED_MARK) else first


def bucket_of_path(path: str) -> str | None:
    """The bucket a request path belongs to, or None when it names none."""
    rest = _under(path, BUCKET_PREFIX)
    if rest is None:
        rest = _under(path, STREAM_PREFIX)
    if rest is None:
        return None
    # Stream paths lose leading and trailing slashes (``stream_path``); do the same.
    return bucket_of_name(rest.strip("/")) or None


def bucket_route(path: str) -> str | None:
    """The raw bucket segment of a ``/ds/{bucket}/...`` path, None on other paths."""
    rest = _under(path, BUCKET_PREFIX)
    if rest is None:
        return None
    return rest.split("/", 1)[0]


def fork_source_name(reference: str, *, bucket: str | None) -> str:
    """The stream a ``Stream-Forked-From`` value names.

    ``bucket`` is the request's bucket on ``/ds/{bucket}/...``, None on
    ``/v1/stream``. Raises ``BadRequest`` for a reference no stream can have.
    """
    text = _decoded(reference)
    rest = _under(text, STREAM_PREFIX)
    if rest is not None:
        return stream_path(rest)
    rest = _under(text, BUCKET_PREFIX)
    if rest is not None:
        parts = rest.split("/")
        if len(parts) != 2:
            raise BadRequest("Stream-Forked-From: a /ds source is /ds/{bucket}/{stream}")
        return stream_name(bucket_id(parts[0]), parts[1])
    if bucket is None:
        return stream_path(text)
    if "/" in text:
        raise BadRequest(
            "Stream-Forked-From on /ds names a stream id of the same bucket,"
            " or /ds/{bucket}/{stream}, or /v1/stream/{path}"
        )
    return stream_name(bucket_id(bucket), text)


def _decoded(reference: str) -> str:
    # Header values arrive as latin-1 text; the bytes are UTF-8 with %-escapes.
    try:
        return unquote(reference.encode("latin-1").decode("utf-8"), errors="strict")
    except UnicodeError:
        raise BadRequest("Stream-Forked-From is not valid UTF-8") from None


def _under(path: str, prefix: str) -> str | None:
    if path == prefix:
        return ""
    if path.startswith(prefix + "/"):
        return path[len(prefix) + 1 :]
    return None

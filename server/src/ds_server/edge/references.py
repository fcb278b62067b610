"""Headers that name a stream: how a ``Stream-Forked-From`` value becomes a stream name.

Fork sources are paths, percent-encoded like a URL path:

- ``/v1/stream/{path}`` and ``/ds/{bucket}/{stream}`` name a stream
  absolutely, on either surface;
- anything else is relative to the request's surface: on ``/v1/stream`` a
  stream path (``chat/room-1``), on ``/ds/{bucket}/...`` a stream id of the
  same bucket (``room-1``).

Authorization (``auth/access.py``) and the create operation both resolve a
source with ``fork_source_name`` and nothing else, so what is authorized is
always what is served.
"""

from __future__ import annotations

from urllib.parse import unquote

from ds_server.edge.surfaces import BUCKET_PREFIX, STREAM_PREFIX, under
from ds_server.protocol.errors import BadRequest
from ds_server.protocol.names import bucket_id, stream_name, stream_path


def fork_source_name(reference: str, *, bucket: str | None) -> str:
    """The stream a ``Stream-Forked-From`` value names.

    ``bucket`` is the request's bucket on ``/ds/{bucket}/...``, None on
    ``/v1/stream``. Raises ``BadRequest`` for a reference no stream can have.
    """
    text = _decoded(reference)
    rest = under(text, STREAM_PREFIX)
    if rest is not None:
        return stream_path(rest)
    rest = under(text, BUCKET_PREFIX)
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

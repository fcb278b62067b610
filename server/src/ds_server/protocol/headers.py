"""Protocol header names, each spelled once."""

from __future__ import annotations

CONTENT_TYPE = "Content-Type"
CACHE_CONTROL = "Cache-Control"
ETAG = "ETag"
IF_NONE_MATCH = "If-None-Match"
LOCATION = "Location"

STREAM_NEXT_OFFSET = "Stream-Next-Offset"
STREAM_UP_TO_DATE = "Stream-Up-To-Date"
STREAM_CLOSED = "Stream-Closed"
STREAM_CURSOR = "Stream-Cursor"
STREAM_SEQ = "Stream-Seq"
STREAM_TTL = "Stream-TTL"
STREAM_EXPIRES_AT = "Stream-Expires-At"
STREAM_SSE_DATA_ENCODING = "Stream-SSE-Data-Encoding"
STREAM_FORKED_FROM = "Stream-Forked-From"
STREAM_FORK_OFFSET = "Stream-Fork-Offset"
STREAM_SNAPSHOT_OFFSET = "Stream-Snapshot-Offset"

PRODUCER_ID = "Producer-Id"
PRODUCER_EPOCH = "Producer-Epoch"
PRODUCER_SEQ = "Producer-Seq"
PRODUCER_EXPECTED_SEQ = "Producer-Expected-Seq"
PRODUCER_RECEIVED_SEQ = "Producer-Received-Seq"

# Identity forwarded by the gateway; scopes Stream-Seq per writer.
WRITER_IDENTITY = "X-JWT-Sub"

TRUE = "true"

# Headers a browser client must be able to read from responses.
EXPOSED = (
    STREAM_NEXT_OFFSET,
    STREAM_UP_TO_DATE,
    STREAM_CLOSED,
    STREAM_CURSOR,
    STREAM_TTL,
    STREAM_EXPIRES_AT,
    STREAM_SSE_DATA_ENCODING,
    STREAM_FORKED_FROM,
    STREAM_FORK_OFFSET,
    STREAM_SNAPSHOT_OFFSET,
    PRODUCER_EPOCH,
    PRODUCER_SEQ,
    PRODUCER_EXPECTED_SEQ,
    PRODUCER_RECEIVED_SEQ,
    ETAG,
    LOCATION,
    CONTENT_TYPE,
)


def is_true(value: str | None) -> bool:
    """A presence header counts only when its value is exactly ``true`` (any case)."""
    return value is not None and value.lower() == TRUE

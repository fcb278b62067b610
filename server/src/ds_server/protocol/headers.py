"""Protocol header names, each spelled once, in lower case.

Header names are case-insensitive; ASGI servers hand them over lower-cased
and HTTP/2 sends them so. Spelling ours the same way lets request lookups
use a plain dict and responses skip case folding.
"""

from __future__ import annotations

CONTENT_TYPE = "content-type"
CACHE_CONTROL = "cache-control"
ETAG = "etag"
IF_NONE_MATCH = "if-none-match"
LOCATION = "location"

STREAM_NEXT_OFFSET = "stream-next-offset"
STREAM_UP_TO_DATE = "stream-up-to-date"
STREAM_CLOSED = "stream-closed"
STREAM_CURSOR = "stream-cursor"
STREAM_SEQ = "stream-seq"
STREAM_TTL = "stream-ttl"
STREAM_EXPIRES_AT = "stream-expires-at"
STREAM_SSE_DATA_ENCODING = "stream-sse-data-encoding"
STREAM_FORKED_FROM = "stream-forked-from"
STREAM_FORK_OFFSET = "stream-fork-offset"
# Moves a fork point past Stream-Fork-Offset, by bytes or (JSON) messages.
STREAM_FORK_SUB_OFFSET = "stream-fork-sub-offset"
STREAM_SNAPSHOT_OFFSET = "stream-snapshot-offset"

PRODUCER_ID = "producer-id"
PRODUCER_EPOCH = "producer-epoch"
PRODUCER_SEQ = "producer-seq"
PRODUCER_EXPECTED_SEQ = "producer-expected-seq"
PRODUCER_RECEIVED_SEQ = "producer-received-seq"

# Identity forwarded by the gateway (auth.identity): the verified token's
# payload; and the writer identity that scopes Stream-Seq, which in gateway
# mode the server sets itself to the payload's sub (auth.gateway).
IDENTITY_PAYLOAD = "x-jwt-payload"
WRITER_IDENTITY = "x-jwt-sub"

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

"""Protocol header names, spelled once (HTTP header names are case-insensitive).

httpx looks headers up case-insensitively, so these canonical spellings
serve requests and responses alike.
"""

from __future__ import annotations

CONTENT_TYPE = "Content-Type"
AUTHORIZATION = "Authorization"

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

TRUE = "true"


def is_true(value: str | None) -> bool:
    """A presence header counts only when its value is ``true`` (any case)."""
    return value is not None and value.lower() == TRUE

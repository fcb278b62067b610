"""The columns of session events, as every reader produces them (sessions.md §2, §3)."""

from __future__ import annotations

from pyspark.sql.types import (
    IntegerType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

EVENT_SCHEMA = StructType(
    [
        StructField("stream", StringType(), nullable=False),
        StructField("offset", StringType(), nullable=False),
        StructField("event_index", IntegerType(), nullable=False),
        StructField("type", StringType()),
        StructField("key", StringType()),
        StructField("operation", StringType()),
        StructField("event_time", TimestampType()),
        StructField("payload", StringType(), nullable=False),
    ]
)
"""``offset`` is the start of the read that delivered the message (a 20-digit offset) and
``event_index`` its place in that read, so ``ORDER BY stream, offset, event_index`` is
stream order, as in ``session_events``. A snapshot read from a bootstrap is a row with
``event_index`` -1 at its offset, its JSON in ``payload``."""

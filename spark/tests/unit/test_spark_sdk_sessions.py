"""§5's figures over a session the Python SDK writes: presence refreshes and expiry.

Writers refresh presence (an upsert every 20 s, each with a new
``expires_at``) and a writer that dies says nothing; §5 does not read
``expires_at``. So refreshes change ``events`` only, and a dead writer
counts as online in ``peak_online`` until it is said otherwise
(docs/sessions.md, Presence and typing that expire).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import msgspec
from ds_spark.analytics.transforms import (
    filter_messages,
    to_first_token_latencies,
    to_session_analytics,
    with_event_kind,
)
from durable_sessions.sessions import (
    chunk_event,
    fields_of,
    message_event,
    presence_event,
    typing_event,
)
from frames import frame

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

T0 = datetime(2026, 11, 26, 10, 0, tzinfo=UTC)


def _at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def _rows(stream: str, events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The events as ds-sync stores them: one read per event, §2's columns."""
    rows = []
    for position, event in enumerate(events):
        fields = fields_of(event)
        time = None if fields.time is None else fields.time.replace(tzinfo=None)
        payload = msgspec.json.encode(event).decode()
        offset = str(position).zfill(20)
        rows.append((stream, offset, 0, fields.type, fields.key, fields.operation, time, payload))
    return rows


def test_refreshes_change_no_figure_but_events_and_a_dead_writer_stays_counted(
    spark: SparkSession,
) -> None:
    events = [
        presence_event("alice", at=_at(0)),
        presence_event("bob", at=_at(1)),  # bob's writer dies right after: no refresh, no goodbye
        message_event("q", "What is a stream?", role="user", author="user:alice", at=_at(2)),
        typing_event("assistant", at=_at(2)),
        chunk_event("r", "A log", 0, at=_at(3)),
        message_event("r", "A log", role="assistant", author="assistant", edit=True, at=_at(4)),
        *(presence_event("alice", at=_at(t)) for t in (20, 40, 60, 80, 100)),  # refreshes
        presence_event("carol", at=_at(120)),  # bob expired at 61 s for live readers
        presence_event("alice", "offline", at=_at(130)),
        presence_event("carol", "offline", at=_at(131)),
    ]
    refreshes = range(6, 11)
    refreshed = _rows("refreshed", events)
    plain = _rows("plain", [e for n, e in enumerate(events) if n not in refreshes])
    kinded = frame(spark, refreshed + plain).transform(filter_messages).transform(with_event_kind)
    latencies = kinded.transform(to_first_token_latencies)
    sessions = kinded.transform(to_session_analytics, latencies).collect()
    result = {row.session: row.asDict() for row in sessions}
    for name in ("refreshed", "plain"):
        row = result[name]
        # Three at once by §5 (bob never said he left); two at once for live readers.
        assert (row["participants"], row["peak_online"]) == (3, 3)
        assert (row["user_messages"], row["assistant_messages"], row["chunks"]) == (1, 1, 1)
        assert row["first_token_latency_p50_ms"] == 1000.0
    assert (result["refreshed"]["events"], result["plain"]["events"]) == (14, 9)

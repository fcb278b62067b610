"""The §5 transforms on tiny frames (sessions.md §5)."""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Any

import pytest
from ds_spark.analytics.transforms import (
    filter_messages,
    to_daily_rollup,
    to_first_token_latencies,
    to_live_reactions,
    to_peak_online,
    to_session_analytics,
    with_event_kind,
)
from frames import at, event, frame

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def _kinded(spark: SparkSession, rows: list[tuple[Any, ...]]) -> DataFrame:
    return frame(spark, rows).transform(filter_messages).transform(with_event_kind)


def _by_stream(result: DataFrame, column: str) -> dict[str, Any]:
    return {row["stream"]: row[column] for row in result.collect()}


def test_event_kind_needs_type_and_key(spark: SparkSession) -> None:
    rows = [
        event("s", 1, "message", "msg:1", "insert", value={"role": "user"}),
        event("s", 2, "presence", None, "set"),
        event("s", 3, None, "user:a", "set"),
        event("s", 4, "presence", "user:a", "Set", value={"status": "away"}),
        event("s", 5, "chunk", "msg:1", "append"),
        event("s", 6, "typing", "user:a", "whatever"),
    ]
    kinded = _kinded(spark, rows).orderBy("offset").collect()
    assert [(r.type, r.key, r.operation, r.kind) for r in kinded] == [
        ("message", "msg:1", "insert", "upsert"),
        (None, None, None, None),
        (None, None, None, None),
        ("presence", "user:a", "Set", None),
        ("chunk", "msg:1", "append", "append"),
        ("typing", "user:a", "whatever", None),
    ]
    assert kinded[0].role == "user"
    assert kinded[3].status == "away"


def test_snapshot_rows_are_not_events(spark: SparkSession) -> None:
    snapshot = ("s", "0".zfill(20), -1, None, None, None, None, "{}")
    rows = [snapshot, event("s", 1, "t", "k", "set")]
    assert frame(spark, rows).transform(filter_messages).count() == 1


def test_peak_online_counts_latest_presence_per_key(spark: SparkSession) -> None:
    rows = [
        event("s", 1, "presence", "user:a", "set", value={"status": "online"}),
        event("s", 2, "presence", "user:b", "insert", value={}),  # no status: online
        event("s", 3, "typing", "user:c", "set"),  # not presence
        event("s", 4, "presence", "user:a", "update", value={"status": "away"}),  # still on
        event("s", 5, "presence", "user:c", "set", value={"status": None}),  # null: online
        event("s", 6, "presence", "user:a", "delete"),
        event("s", 7, "presence", "user:b", "set", value={"status": "offline"}),
        event("s", 8, "presence", "user:a", "set", value={"status": "online"}),
        event("t", 1, "presence", "user:a", "set", value={"status": "offline"}),
        event("t", 2, "presence", "user:b", "append", value={"status": "online"}),
    ]
    peaks = _by_stream(_kinded(spark, rows).transform(to_peak_online), "peak_online")
    assert peaks == {"s": 3, "t": 0}


def test_live_reactions_follow_the_last_upsert_or_delete(spark: SparkSession) -> None:
    rows = [
        event("s", 1, "reaction", "reaction:1:a:+1", "set", value={"emoji": "+1"}),
        event("s", 2, "reaction", "reaction:1:b:+1", "set"),
        event("s", 3, "reaction", "reaction:1:b:+1", "delete"),
        event("s", 4, "reaction", "reaction:1:c:+1", "delete"),
        event("s", 5, "reaction", "reaction:1:c:+1", "insert"),
        event("s", 6, "reaction", "reaction:1:a:+1", "append"),  # ignored
        event("t", 1, "reaction", "reaction:1:a:+1", "remove"),
    ]
    reactions = _by_stream(_kinded(spark, rows).transform(to_live_reactions), "reactions")
    assert reactions == {"s": 2, "t": 0}


def test_first_token_latency_rules(spark: SparkSession) -> None:
    user, assistant = {"role": "user"}, {"role": "assistant"}
    rows = [
        # msg:1 first upserted by the user; answered by a chunk 1.5 s later.
        event("s", 1, "message", "msg:1", "insert", at(0), user),
        event("s", 2, "chunk", "msg:2", "append", None, assistant),  # no time: skipped
        event("s", 3, "chunk", "msg:2", "append", at(1.5), {"role": "user"}),  # not assistant
        event("s", 4, "chunk", "msg:2", "append", at(1.5), assistant),
        # An edit of msg:1 is no new user message.
        event("s", 5, "message", "msg:1", "update", at(2), user),
        # msg:3 first upserted by the assistant: never a user message, even when edited.
        event("s", 6, "message", "msg:3", "insert", at(3), assistant),
        event("s", 7, "message", "msg:3", "update", at(4), user),
        # msg:4 has no time of its own: left out.
        event("s", 8, "message", "msg:4", "insert", None, user),
        # msg:5, answered with clock skew: negative latency kept.
        event("s", 9, "message", "msg:5", "insert", at(10), user),
        event("s", 10, "message", "msg:6", "insert", at(9.75), assistant),
        # msg:5 deleted and upserted again: still no new user message.
        event("s", 11, "message", "msg:5", "delete", at(11)),
        event("s", 12, "message", "msg:5", "insert", at(12), user),
        event("s", 13, "message", "msg:7", "insert", at(13), assistant),
        # msg:8 never answered.
        event("s", 14, "message", "msg:8", "insert", at(20), user),
    ]
    latencies = _kinded(spark, rows).transform(to_first_token_latencies)
    assert sorted(r.latency_ms for r in latencies.collect()) == [-250.0, 1500.0]


def test_session_analytics_row(spark: SparkSession) -> None:
    user, assistant = {"role": "user"}, {"role": "assistant", "text": "x"}
    rows = [
        event("s", 1, "presence", "user:a", "set", at(0), {"status": "online"}),
        event("s", 2, "message", "msg:1", "insert", at(1), user),
        event("s", 3, "chunk", "msg:2", "append", at(2), assistant),
        event("s", 4, "chunk", "msg:2", "append", at(3), assistant),
        event("s", 5, "message", "msg:3", "insert", at(4), assistant),
        event("s", 6, "message", "msg:4", "insert", at(5), user),
        event("s", 7, "message", "msg:2", "insert", at(6), assistant),
        event("s", 8, "reaction", "reaction:msg:2:a:+1", "set", None, {"emoji": "+1"}),
        event("s", 9, None, None, None),
        # Only untimed events: no times, no duration.
        event("u", 1, "message", "msg:1", "insert", None, user),
        # One timed event: duration 0.
        event("v", 1, "presence", "user:z", "delete", at(7)),
    ]
    kinded = _kinded(spark, rows)
    sessions = kinded.transform(to_session_analytics, kinded.transform(to_first_token_latencies))
    result = {row.session: row.asDict() for row in sessions.collect()}
    assert result["s"] == {
        "session": "s",
        "events": 9,
        "first_event_at": at(0),
        "last_event_at": at(6),
        "duration_s": 6.0,
        "participants": 1,
        "peak_online": 1,
        "user_messages": 2,
        "assistant_messages": 2,
        "chunks": 2,
        "reactions": 1,
        "first_token_latency_p50_ms": pytest.approx(1000.0),
        "first_token_latency_p95_ms": pytest.approx(1000.0),
    }
    assert result["u"]["first_event_at"] is None
    assert result["u"]["duration_s"] is None
    assert result["u"]["user_messages"] == 1
    assert result["u"]["first_token_latency_p50_ms"] is None
    assert result["v"]["duration_s"] == 0.0
    assert result["v"]["peak_online"] == 0
    assert sessions.schema["events"].dataType.simpleString() == "bigint"
    assert sessions.schema["peak_online"].dataType.simpleString() == "bigint"


def test_daily_rollup_pools_latencies_and_participants(spark: SparkSession) -> None:
    user, assistant = {"role": "user"}, {"role": "assistant"}
    rows = [
        event("a", 1, "presence", "user:x", "set", at(0)),
        event("a", 2, "message", "msg:1", "insert", at(1), user),
        event("a", 3, "chunk", "msg:2", "append", at(1.1), assistant),
        event("b", 1, "presence", "user:x", "set", at(60)),
        event("b", 2, "presence", "user:y", "set", at(61)),
        event("b", 3, "message", "msg:1", "insert", at(62), user),
        event("b", 4, "message", "msg:2", "insert", at(62.3), assistant),
        event("b", 5, "message", "msg:3", "insert", at(63), user),
        event("b", 6, "message", "msg:4", "insert", at(63.5), assistant),
        # The next UTC day, no latency.
        event("c", 1, "presence", "user:x", "set", at(86400)),
        # No timed event: in no day.
        event("d", 1, "presence", "user:q", "set"),
    ]
    kinded = _kinded(spark, rows)
    latencies = kinded.transform(to_first_token_latencies)
    sessions = kinded.transform(to_session_analytics, latencies)
    daily = sessions.transform(to_daily_rollup, kinded, latencies)
    result = {row.day: row.asDict() for row in daily.collect()}
    assert set(result) == {date(2026, 11, 26), date(2026, 11, 27)}
    first = result[date(2026, 11, 26)]
    assert (first["sessions"], first["events"], first["participants"]) == (2, 9, 2)
    # Latencies 100, 300, 500 ms pooled (not averaged per session).
    assert first["first_token_latency_p50_ms"] == pytest.approx(300.0)
    assert first["first_token_latency_p95_ms"] == pytest.approx(480.0)
    second = result[date(2026, 11, 27)]
    assert (second["sessions"], second["events"], second["participants"]) == (1, 1, 1)
    assert second["first_token_latency_p50_ms"] is None


def test_no_events_no_rows(spark: SparkSession) -> None:
    kinded = _kinded(spark, [])
    latencies = kinded.transform(to_first_token_latencies)
    sessions = kinded.transform(to_session_analytics, latencies)
    assert sessions.count() == 0
    assert sessions.transform(to_daily_rollup, kinded, latencies).count() == 0

"""Session analytics as pure ``DataFrame -> DataFrame`` transforms (sessions.md §5).

Input: events in the reader schema (``ds_spark.schema.EVENT_SCHEMA``).
Stream order within a session is ``(offset, event_index)``: offsets are
20-digit strings, so they sort as the byte positions they are. Nothing
here collects to the driver; every step is a Spark aggregation or window.
"""

from __future__ import annotations

# §2's operation kinds: the SDK's extraction (which ds-sync and the readers use) keeps them.
from durable_sessions.sessions.fields import APPEND, DELETE, OPERATION_KINDS, UPSERT
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from ds_spark.analytics.columns import DAILY_COLUMNS, SESSION_COLUMNS

ORDER = ("offset", "event_index")
MICROS_PER_MS = 1000.0
MICROS_PER_S = 1_000_000.0
PERCENTILES = [0.5, 0.95]


def filter_messages(events: DataFrame) -> DataFrame:
    """Drop snapshot rows (event_index -1, from a bootstrap): they are no session's events."""
    return events.filter(F.col("event_index") >= 0)


def with_event_kind(events: DataFrame) -> DataFrame:
    """Add ``kind`` (upsert/delete/append/null), ``role`` and ``status`` from ``value``.

    §2: a message without both a type and a key has neither, nor an operation.
    ``role`` and ``status`` are ``value.role`` / ``value.status`` when they are
    JSON strings' text (any other JSON value's text can never equal ``user``,
    ``assistant`` or ``offline``, which is all that is asked of them).
    """
    typed = F.col("type").isNotNull() & F.col("key").isNotNull()
    operation = F.col("operation")
    kind = F.lit(None).cast("string")
    for name, value in OPERATION_KINDS.items():
        kind = F.when(operation == name, F.lit(value)).otherwise(kind)
    return events.withColumns(
        {
            "type": F.when(typed, F.col("type")),
            "key": F.when(typed, F.col("key")),
            "operation": F.when(typed, operation),
            "kind": F.when(typed, kind),
            "role": F.get_json_object("payload", "$.value.role"),
            "status": F.get_json_object("payload", "$.value.status"),
        }
    )


def _no_time() -> Column:
    return F.lit(None).cast("timestamp")


def _is(type_name: str, *kinds: str) -> Column:
    return (F.col("type") == type_name) & F.col("kind").isin(*kinds)


def to_peak_online(events: DataFrame) -> DataFrame:
    """``stream, peak_online``: the most presence keys online after any one event.

    A key is online while its latest presence upsert-or-delete is an upsert
    whose status is not "offline". Each such event changes the count by its
    key's change of state, so the count after every event is a running sum
    of those changes, and only presence events can raise it.
    """
    presence = events.filter(_is("presence", UPSERT, DELETE))
    online = F.when(
        (F.col("kind") == UPSERT)
        & (F.col("status").isNull() | (F.col("status") != F.lit("offline"))),
        1,
    ).otherwise(0)
    by_key = Window.partitionBy("stream", "key").orderBy(*ORDER)
    by_session = (
        Window.partitionBy("stream")
        .orderBy(*ORDER)
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    return (
        presence.withColumn("online", online)
        .withColumn("change", F.col("online") - F.lag("online", 1, 0).over(by_key))
        .withColumn("count", F.sum("change").over(by_session))
        .groupBy("stream")
        .agg(F.max("count").cast("bigint").alias("peak_online"))
    )


def to_live_reactions(events: DataFrame) -> DataFrame:
    """``stream, reactions``: reaction keys whose last upsert-or-delete is an upsert."""
    last = (
        events.filter(_is("reaction", UPSERT, DELETE))
        .groupBy("stream", "key")
        .agg(F.max_by("kind", F.struct(*ORDER)).alias("last_kind"))
    )
    return last.groupBy("stream").agg(
        F.count(F.when(F.col("last_kind") == UPSERT, 1)).alias("reactions")
    )


def to_first_token_latencies(events: DataFrame) -> DataFrame:
    """``stream, latency_ms``: one row per user message that got a timed assistant event.

    A user message is the first upsert of a message key, when that upsert
    has role "user" and an event time. Its latency runs to the first later
    event (stream order) that is a message upsert or chunk append with role
    "assistant" and an event time. Negative latencies are kept.
    """
    first_upserts = (
        events.filter(_is("message", UPSERT))
        .groupBy("stream", "key")
        .agg(F.min_by(F.struct("role", "event_time", *ORDER), F.struct(*ORDER)).alias("first"))
        .select("stream", "first.*")
        .filter((F.col("role") == "user") & F.col("event_time").isNotNull())
        .select(
            "stream",
            *ORDER,
            F.col("event_time").alias("asked_at"),
            _no_time().alias("answered_at"),
        )
    )
    answers = events.filter(
        (_is("message", UPSERT) | _is("chunk", APPEND))
        & (F.col("role") == "assistant")
        & F.col("event_time").isNotNull()
    ).select(
        "stream", *ORDER, _no_time().alias("asked_at"), F.col("event_time").alias("answered_at")
    )
    after = Window.partitionBy("stream").orderBy(*ORDER).rowsBetween(1, Window.unboundedFollowing)
    timed = first_upserts.unionByName(answers).withColumn(
        "next_answer", F.first("answered_at", ignorenulls=True).over(after)
    )
    return timed.filter(F.col("asked_at").isNotNull() & F.col("next_answer").isNotNull()).select(
        "stream",
        ((F.unix_micros("next_answer") - F.unix_micros("asked_at")) / MICROS_PER_MS).alias(
            "latency_ms"
        ),
    )


def to_session_analytics(events: DataFrame, latencies: DataFrame) -> DataFrame:
    """One row per session with every column of ``session_analytics`` (§5)."""
    message_upsert = _is("message", UPSERT)
    counts = events.groupBy("stream").agg(
        F.count(F.lit(1)).alias("events"),
        F.min("event_time").alias("first_event_at"),
        F.max("event_time").alias("last_event_at"),
        F.count_distinct(F.when(_is("presence", UPSERT), F.col("key"))).alias("participants"),
        F.count_distinct(F.when(message_upsert & (F.col("role") == "user"), F.col("key"))).alias(
            "user_messages"
        ),
        F.count_distinct(
            F.when(
                (message_upsert & (F.col("role") == "assistant")) | _is("chunk", APPEND),
                F.col("key"),
            )
        ).alias("assistant_messages"),
        F.count(F.when(_is("chunk", APPEND), 1)).alias("chunks"),
    )
    percentiles = latencies.groupBy("stream").agg(
        F.percentile("latency_ms", PERCENTILES).alias("p")
    )
    duration = (F.unix_micros("last_event_at") - F.unix_micros("first_event_at")) / MICROS_PER_S
    return (
        counts.join(events.transform(to_peak_online), "stream", "left")
        .join(events.transform(to_live_reactions), "stream", "left")
        .join(percentiles, "stream", "left")
        .select(
            F.col("stream").alias("session"),
            "events",
            "first_event_at",
            "last_event_at",
            duration.alias("duration_s"),
            "participants",
            F.coalesce("peak_online", F.lit(0).cast("bigint")).alias("peak_online"),
            "user_messages",
            "assistant_messages",
            "chunks",
            F.coalesce("reactions", F.lit(0).cast("bigint")).alias("reactions"),
            F.col("p")[0].alias("first_token_latency_p50_ms"),
            F.col("p")[1].alias("first_token_latency_p95_ms"),
        )
        .select(*SESSION_COLUMNS)
    )


def to_daily_rollup(sessions: DataFrame, events: DataFrame, latencies: DataFrame) -> DataFrame:
    """One row per UTC day of ``first_event_at`` (``daily_session_rollup``, §5).

    Participants are distinct presence-upsert keys across the day's
    sessions; the percentiles are over all the day's latencies, not an
    average of the sessions'. Sessions without a timed event are in no day.
    """
    days = sessions.filter(F.col("first_event_at").isNotNull()).select(
        F.col("session").alias("stream"), F.to_date("first_event_at").alias("day")
    )
    totals = (
        sessions.filter(F.col("first_event_at").isNotNull())
        .groupBy(F.to_date("first_event_at").alias("day"))
        .agg(F.count(F.lit(1)).alias("sessions"), F.sum("events").cast("bigint").alias("events"))
    )
    participants = (
        events.filter(_is("presence", UPSERT))
        .select("stream", "key")
        .join(days, "stream")
        .groupBy("day")
        .agg(F.count_distinct("key").alias("participants"))
    )
    percentiles = (
        latencies.join(days, "stream")
        .groupBy("day")
        .agg(F.percentile("latency_ms", PERCENTILES).alias("p"))
    )
    return (
        totals.join(participants, "day", "left")
        .join(percentiles, "day", "left")
        .select(
            "day",
            "sessions",
            "events",
            F.coalesce("participants", F.lit(0).cast("bigint")).alias("participants"),
            F.col("p")[0].alias("first_token_latency_p50_ms"),
            F.col("p")[1].alias("first_token_latency_p95_ms"),
        )
        .select(*DAILY_COLUMNS)
    )

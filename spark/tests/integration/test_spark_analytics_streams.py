"""§5 on Spark over a real ds-server equals the plain-Python answer key, column by column."""

from __future__ import annotations

from typing import TYPE_CHECKING

from compare import differences
from ds_spark.analytics.columns import DAILY_COLUMNS, SESSION_COLUMNS
from ds_spark.analytics.pipeline import compute
from generator import generate
from reference import analytics
from spark_support import append_batch, create_stream

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def test_analytics_from_streams_match_the_answer_key(
    spark: SparkSession, server_url: str, bucket: str
) -> None:
    sessions = generate(seed=17, sessions=24)
    for name, messages in sessions.items():
        url = f"{server_url}/ds/{bucket}/{name}"
        create_stream(url)
        # Appends of a few messages each, so reads hold several messages.
        for start in range(0, len(messages), 7):
            append_batch(url, messages[start : start + 7])
    expected_sessions, expected_daily = analytics(
        {f"{bucket}/{name}": messages for name, messages in sessions.items()}
    )

    events = (
        spark.read.format("durable_streams")
        .option("url", server_url)
        .option("streams", f"{bucket}/*")
        .load()
    )
    # Read once: every table below reuses the events, as the job does.
    frames = compute(events.cache())
    actual_sessions = {row.session: row.asDict() for row in frames.sessions.collect()}
    actual_daily = {row.day: row.asDict() for row in frames.daily.collect()}

    assert differences(expected_sessions, actual_sessions, SESSION_COLUMNS) == []
    assert differences(expected_daily, actual_daily, DAILY_COLUMNS) == []
    assert len(actual_daily) >= 2

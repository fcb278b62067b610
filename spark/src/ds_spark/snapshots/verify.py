"""Checking published snapshots: bootstrap + the messages after it == a full replay from Postgres.

Both sides are cut at the same offsets, ds-sync's checkpoints read once:
a stream's bootstrap up to its checkpoint, and its ``session_events`` rows
before it (all committed, since the checkpoint commits with its rows).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec
from durable_sessions.protocol.offsets import format_offset
from pyspark.sql import functions as F

from ds_spark.snapshots.source import read_up_to
from ds_spark.snapshots.states import to_states, with_matching_states

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pyspark.sql import DataFrame, SparkSession

    from ds_spark.snapshots.source import StreamSource


def verify(
    spark: SparkSession, source: StreamSource, postgres_url: str, ends: Mapping[str, int]
) -> DataFrame:
    """``stream, matches`` for every stream in ``ends``."""
    bootstrapped = read_up_to(spark, source, ends).transform(to_states)
    history = (
        spark.read.format("session_events")
        .option("url", postgres_url)
        .option(
            "endingOffsets",
            msgspec.json.encode({path: format_offset(end) for path, end in ends.items()}).decode(),
        )
        .load()
        .transform(to_states)
    )
    return with_matching_states(bootstrapped, history)


def mismatches(checked: DataFrame) -> list[str]:
    """The streams whose states differ (at most 20 names reach the driver)."""
    return [row["stream"] for row in checked.filter(~F.col("matches")).limit(20).collect()]

"""``ds-spark snapshots``: fold each session from its snapshot on and publish the new state.

Extract: each stream's bootstrap (its latest snapshot and the messages
after it), cut at ds-sync's committed checkpoint, so a snapshot never
retires history Postgres does not hold yet (sessions.md §6). Transform:
the §6 fold, per stream, in stream order. Load: ``PUT
{stream}/snapshot/{checkpoint}`` from the executors. Then verify.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import msgspec
from pyspark.sql import functions as F

from ds_spark.offsets import format_offset
from ds_spark.snapshots.publish import publish_states
from ds_spark.snapshots.states import to_states

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pyspark.sql import DataFrame, SparkSession


@dataclass(frozen=True, slots=True)
class StreamSource:
    """Where the streams are: the server, a bearer token, the stream globs."""

    url: str
    token: str | None
    patterns: str


def read_up_to(spark: SparkSession, source: StreamSource, ends: Mapping[str, int]) -> DataFrame:
    """Each stream named in ``ends``: its bootstrap, cut at its end."""
    reader = (
        spark.read.format("durable_streams")
        .option("url", source.url)
        .option("streams", source.patterns)
        .option("startingOffsets", "bootstrap")
        .option(
            "endingOffsets",
            msgspec.json.encode({path: format_offset(end) for path, end in ends.items()}).decode(),
        )
        .option("onlyEndingStreams", "true")
    )
    if source.token:
        reader = reader.option("token", source.token)
    return reader.load()


def ends_frame(spark: SparkSession, ends: Mapping[str, int]) -> DataFrame:
    """``stream, end`` for the publish step."""
    rows = [(path, format_offset(end)) for path, end in sorted(ends.items())]
    return spark.createDataFrame(rows, "stream string, end string")


def publish(spark: SparkSession, source: StreamSource, ends: Mapping[str, int]) -> DataFrame:
    """Fold and publish every stream in ``ends`` at its end; ``stream, offset, outcome``."""
    states = read_up_to(spark, source, ends).transform(to_states)
    return publish_states(states, ends_frame(spark, ends), source.url, source.token)


def outcome_counts(outcomes: DataFrame) -> dict[str, int]:
    """How many streams ended each way (a handful of rows reach the driver)."""
    counted = outcomes.groupBy("outcome").agg(F.count(F.lit(1)).alias("n")).collect()
    return {row["outcome"]: int(row["n"]) for row in counted}

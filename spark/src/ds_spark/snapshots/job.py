"""``ds-spark snapshots``: fold each session from its snapshot on and publish the new state.

Extract: each stream's bootstrap (its latest snapshot and the messages
after it), cut at ds-sync's committed checkpoint, so a snapshot never
retires history Postgres does not hold yet (sessions.md §6). Transform:
the §6 fold, per stream, in stream order. Load: ``PUT
{stream}/snapshot/{checkpoint}`` from the executors. Then verify.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from durable_sessions.protocol.offsets import format_offset
from durable_sessions.protocol.patterns import parse_patterns
from pyspark.sql import functions as F

from ds_spark.errors import SnapshotError
from ds_spark.postgres import committed_checkpoints, ensure_schema
from ds_spark.server import stream_server
from ds_spark.snapshots.publish import publish_states
from ds_spark.snapshots.source import StreamSource, read_up_to
from ds_spark.snapshots.states import to_states
from ds_spark.snapshots.verify import mismatches, verify
from ds_spark.steps import step as _step

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pyspark.sql import DataFrame, SparkSession

    from ds_spark.settings import Settings

log = logging.getLogger("ds_spark.snapshots")


def ends_frame(spark: SparkSession, ends: Mapping[str, int]) -> DataFrame:
    """``stream, end`` for the publish step."""
    rows = [(path, format_offset(end)) for path, end in sorted(ends.items())]
    return spark.createDataFrame(rows, "stream string, end string")


def publish(spark: SparkSession, source: StreamSource, ends: Mapping[str, int]) -> DataFrame:
    """Fold and publish every stream in ``ends`` at its end; ``stream, offset, outcome``."""
    states = read_up_to(spark, source, ends).transform(to_states)
    return publish_states(states, ends_frame(spark, ends), source.url, source.token)


@dataclass(frozen=True, slots=True)
class SnapshotOutcome:
    """How each stream's publication ended, and which streams did not verify."""

    outcomes: dict[str, int]
    verified: int
    mismatched: list[str]


def main(spark: SparkSession, settings: Settings) -> SnapshotOutcome:
    """Publish every session stream's state at ds-sync's checkpoint, then verify it."""
    source = StreamSource(settings.server_url, settings.token_source, settings.streams)
    with _step("schema: the session contract's migrations"):
        ensure_schema(settings.postgres_url)
    with _step("extract: ds-sync's committed checkpoints"):
        # Never beyond them: history leaves a stream only once it is in Postgres (§6).
        live = session_streams(settings)
        ends = {
            path: end
            for path, end in committed_checkpoints(settings.postgres_url).items()
            if end > 0 and path in live
        }
    with _step(f"transform + load: fold and publish {len(ends)} streams"):
        outcomes = outcome_counts(publish(spark, source, ends))
    for outcome, count in sorted(outcomes.items()):
        log.info("%d streams: %s", count, outcome)
    with _step("verify: bootstrap + messages after it == full replay from session_events"):
        now = {
            path: end
            for path, end in committed_checkpoints(settings.postgres_url).items()
            if path in ends
        }
        checked = verify(spark, source, settings.postgres_url, now).cache()
        total, mismatched = checked.count(), mismatches(checked)
    if mismatched:
        raise SnapshotError(
            f"{len(mismatched)} streams' bootstrap state differs from their history: "
            + ", ".join(mismatched[:5])
        )
    log.info("verified %d streams", total)
    return SnapshotOutcome(outcomes, total, mismatched)


def session_streams(settings: Settings) -> set[str]:
    """The JSON streams the patterns name now: a deleted one keeps its checkpoint, not its
    snapshot, and a stream that is not JSON is left alone, as ds-sync leaves it."""
    found: set[str] = set()
    with stream_server(settings.server_url, settings.token_source) as api:
        for pattern in parse_patterns(settings.streams, listable=True):
            found.update(info.path for info in api.find(pattern) if info.is_json)
    return found


def outcome_counts(outcomes: DataFrame) -> dict[str, int]:
    """How many streams ended each way (a handful of rows reach the driver)."""
    counted = outcomes.groupBy("outcome").agg(F.count(F.lit(1)).alias("n")).collect()
    return {row["outcome"]: int(row["n"]) for row in counted}

"""``ds-spark analytics``: extract -> transform -> load.

Extract: session events (Postgres's ``session_events``, the full history,
or the streams themselves). Transform: §5 (``analytics.pipeline``). Load:
Parquet, the HTML report, and the Postgres tables.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyspark import StorageLevel

from ds_spark.analytics.columns import DAILY_TABLE, SESSION_TABLE
from ds_spark.analytics.pipeline import AnalyticsFrames, compute
from ds_spark.analytics.postgres_load import load_postgres
from ds_spark.analytics.report import write_report
from ds_spark.postgres import ensure_schema
from ds_spark.steps import step as _step
from ds_spark.tokens import token_options

if TYPE_CHECKING:
    from datetime import date
    from pathlib import Path

    from pyspark.sql import DataFrame, SparkSession

    from ds_spark.settings import Settings

log = logging.getLogger("ds_spark.analytics")
STREAMS = "streams"
POSTGRES = "postgres"


@dataclass(frozen=True, slots=True)
class AnalyticsRun:
    """What one run reads and where it writes.

    ``postgres``: ``session_events`` (the full history), results upserted
    into the tables too. ``streams``: the streams' retained messages, for a
    stack without ds-sync; only Parquet and the report are written.
    ``since``: recompute only what sessions.md §5's ``--since`` names.
    """

    source: str
    output_dir: Path
    since: date | None = None


@dataclass(frozen=True, slots=True)
class AnalyticsOutcome:
    sessions: int
    days: int
    report: Path


def extract(spark: SparkSession, settings: Settings, run: AnalyticsRun) -> DataFrame:
    """The session events to analyse, in the reader schema."""
    if run.source == POSTGRES:
        reader = (
            spark.read.format("session_events")
            .option("url", settings.postgres_url)
            .option("partitions", str(settings.postgres_partitions))
        )
        if run.since is not None:
            reader = reader.option("since", run.since.isoformat())
        return reader.load()
    reader = (
        spark.read.format("durable_streams")
        .option("url", settings.server_url)
        .option("streams", settings.streams)
        # The retained messages; a stream whose history a snapshot retired says so (410).
        .option("startingOffsets", "-1")
    )
    return reader.options(**token_options(settings.token_source)).load()


def transform(events: DataFrame) -> AnalyticsFrames:
    """§5; the events are kept by the executors, since every table reads them again."""
    frames = compute(events.persist(StorageLevel.MEMORY_AND_DISK))
    return AnalyticsFrames(
        sessions=frames.sessions.persist(StorageLevel.MEMORY_AND_DISK),
        daily=frames.daily.persist(StorageLevel.MEMORY_AND_DISK),
        latencies=frames.latencies,
    )


def load(frames: AnalyticsFrames, run: AnalyticsRun, postgres_url: str | None = None) -> Path:
    """Parquet, the report, and (given a URL) the Postgres tables; the report's path."""
    if postgres_url is not None:
        with _step("load: upsert session_analytics and daily_session_rollup"):
            load_postgres(frames, postgres_url, partial=run.since is not None)
    with _step("load: parquet"):
        frames.sessions.write.mode("overwrite").parquet(str(run.output_dir / SESSION_TABLE))
        frames.daily.write.mode("overwrite").parquet(str(run.output_dir / DAILY_TABLE))
    with _step("load: report"):
        return write_report(frames, run.output_dir / "report")


def main(spark: SparkSession, settings: Settings, run: AnalyticsRun) -> AnalyticsOutcome:
    """One run."""
    if run.source == POSTGRES:
        with _step("schema: the session contract's migrations"):
            ensure_schema(settings.postgres_url)
    with _step(f"extract: session events from {run.source}"):
        events = extract(spark, settings, run)
    with _step("transform: session analytics and daily rollup (sessions.md §5)"):
        frames = transform(events)
        sessions, days = frames.sessions.count(), frames.daily.count()
    try:
        report = load(frames, run, settings.postgres_url if run.source == POSTGRES else None)
    finally:
        # The executors' copies are no use after the run (and a session may go on).
        for frame in (frames.sessions, frames.daily, events):
            frame.unpersist()
    log.info("done: %d sessions over %d days; report at %s", sessions, days, report)
    return AnalyticsOutcome(sessions=sessions, days=days, report=report)

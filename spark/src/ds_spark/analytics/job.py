"""``ds-spark analytics``: extract -> transform -> load.

Extract: session events (Postgres's ``session_events``, the full history,
or the streams themselves). Transform: §5 (``analytics.pipeline``). Load:
Parquet, the HTML report, and the Postgres tables.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyspark import StorageLevel

from ds_spark.analytics.columns import DAILY_TABLE, SESSION_TABLE
from ds_spark.analytics.pipeline import AnalyticsFrames, compute
from ds_spark.analytics.report import write_report

if TYPE_CHECKING:
    from pathlib import Path

    from pyspark.sql import DataFrame, SparkSession

    from ds_spark.settings import Settings

log = logging.getLogger("ds_spark.analytics")
STREAMS = "streams"


@dataclass(frozen=True, slots=True)
class AnalyticsRun:
    """What one run reads and where it writes."""

    source: str
    output_dir: Path


@dataclass(frozen=True, slots=True)
class AnalyticsOutcome:
    sessions: int
    days: int
    report: Path


def extract(spark: SparkSession, settings: Settings, run: AnalyticsRun) -> DataFrame:
    """The session events to analyse, in the reader schema."""
    reader = (
        spark.read.format("durable_streams")
        .option("url", settings.server_url)
        .option("streams", settings.streams)
        # The retained messages; a stream whose history a snapshot retired says so (410).
        .option("startingOffsets", "-1")
    )
    if settings.token_value:
        reader = reader.option("token", settings.token_value)
    return reader.load()


def transform(events: DataFrame) -> AnalyticsFrames:
    """§5; the events are kept by the executors, since every table reads them again."""
    frames = compute(events.persist(StorageLevel.MEMORY_AND_DISK))
    return AnalyticsFrames(
        sessions=frames.sessions.persist(StorageLevel.MEMORY_AND_DISK),
        daily=frames.daily.persist(StorageLevel.MEMORY_AND_DISK),
        latencies=frames.latencies,
    )


def load(frames: AnalyticsFrames, run: AnalyticsRun) -> Path:
    """Parquet and the report under the output directory; the report's path."""
    with _step("load: parquet"):
        frames.sessions.write.mode("overwrite").parquet(str(run.output_dir / SESSION_TABLE))
        frames.daily.write.mode("overwrite").parquet(str(run.output_dir / DAILY_TABLE))
    with _step("load: report"):
        return write_report(frames, run.output_dir / "report")


def main(spark: SparkSession, settings: Settings, run: AnalyticsRun) -> AnalyticsOutcome:
    """One full run."""
    with _step(f"extract: session events from {run.source}"):
        events = extract(spark, settings, run)
    with _step("transform: session analytics and daily rollup (sessions.md §5)"):
        frames = transform(events)
        sessions, days = frames.sessions.count(), frames.daily.count()
    report = load(frames, run)
    log.info("done: %d sessions over %d days; report at %s", sessions, days, report)
    return AnalyticsOutcome(sessions=sessions, days=days, report=report)


class _step:
    """Logs a step's start and how long it took."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.started = 0.0

    def __enter__(self) -> None:
        self.started = time.monotonic()
        log.info("%s ...", self.name)

    def __exit__(self, kind: object, *_: object) -> None:
        if kind is None:
            log.info("%s: done in %.1fs", self.name, time.monotonic() - self.started)

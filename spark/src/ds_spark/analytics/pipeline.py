"""The analytics transform chain: events in, the two §5 tables out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ds_spark.analytics.transforms import (
    filter_messages,
    to_daily_rollup,
    to_first_token_latencies,
    to_session_analytics,
    with_event_kind,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


@dataclass(frozen=True, slots=True)
class AnalyticsFrames:
    """``session_analytics``, ``daily_session_rollup`` and the latencies both derive from."""

    sessions: DataFrame
    daily: DataFrame
    latencies: DataFrame


def compute(events: DataFrame) -> AnalyticsFrames:
    """§5 over ``events`` (reader schema); nothing is computed until a frame is used."""
    kinded = events.transform(filter_messages).transform(with_event_kind)
    latencies = kinded.transform(to_first_token_latencies)
    sessions = kinded.transform(to_session_analytics, latencies)
    daily = sessions.transform(to_daily_rollup, kinded, latencies)
    return AnalyticsFrames(sessions=sessions, daily=daily, latencies=latencies)

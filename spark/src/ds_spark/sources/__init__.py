"""Spark Python DataSources: Durable Streams over HTTP, and session_events from Postgres."""

from __future__ import annotations

from ds_spark.sources.durable_streams import DurableStreamsDataSource
from ds_spark.sources.session_events import SessionEventsDataSource

__all__ = ["DurableStreamsDataSource", "SessionEventsDataSource"]

"""ds-sync's /metrics while it syncs a stream into Postgres (real server, real Postgres)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from prometheus_client.parser import text_string_to_metric_families
from sync_support import count_events, wait_until

if TYPE_CHECKING:
    from sync_support import Streams, SyncProcess

EVENT = {"type": "message", "key": "msg:1", "operation": "set", "value": {"text": "hi"}}
TO_POSTGRES = {"direction": "stream_to_postgres"}


def test_events_and_lag_toward_postgres_are_exported(
    sync: SyncProcess, streams: Streams, postgres_db: str
) -> None:
    path = streams.create("measured")
    # Lag runs from an event's own timestamp: this one was written 30 s ago.
    written = (datetime.now(UTC) - timedelta(seconds=30)).isoformat()
    stamped = {**EVENT, "headers": {"timestamp": written}}
    streams.append("measured", stamped, {**EVENT, "key": "msg:2"})
    sync.start()
    wait_until(lambda: count_events(postgres_db, path) == 2, what="2 rows")
    found = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(sync.metrics())
        for sample in family.samples
    }
    labels = tuple(TO_POSTGRES.items())
    assert found["ds_sync_events_total", labels] == 2
    # One batch carried a timestamp (the unstamped message has none to measure).
    assert found["ds_sync_lag_seconds_count", labels] == 1
    assert found["ds_sync_lag_seconds_sum", labels] >= 30
    assert found["ds_sync_streams_behind", ()] == 0

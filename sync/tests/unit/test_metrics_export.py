"""ds-sync's /metrics text: families per direction, bounded stream labels."""

from __future__ import annotations

import time

from ds_sync.metrics import Metrics
from ds_sync.metrics_export import OTHERS, Exposition
from prometheus_client.parser import text_string_to_metric_families


def samples(metrics: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(Exposition(metrics).render())
        for sample in family.samples
    }


def test_events_and_retries_are_counted_per_direction() -> None:
    metrics = Metrics()
    metrics.committed(group_size=2, rows=5)
    metrics.retries += 1
    items, users = metrics.table("public.items"), metrics.table("public.users")
    items.changes, users.changes, users.errors = 3, 4, 2
    found = samples(metrics)
    assert found["ds_sync_events_total", (("direction", "stream_to_postgres"),)] == 5
    assert found["ds_sync_events_total", (("direction", "postgres_to_stream"),)] == 7
    assert found["ds_sync_retries_total", (("direction", "stream_to_postgres"),)] == 1
    assert found["ds_sync_retries_total", (("direction", "postgres_to_stream"),)] == 2
    assert found["ds_sync_table_changes_total", (("table", "public.users"),)] == 4


def test_lag_goes_to_the_histogram_of_its_direction() -> None:
    metrics = Metrics()
    metrics.observe_lag("stream_to_postgres", 0.04)
    metrics.observe_lag("stream_to_postgres", -1.0)  # clocks apart: never negative
    metrics.table("public.items").delivered_lag(2.0)
    found = samples(metrics)
    to_pg = (("direction", "stream_to_postgres"),)
    to_stream = (("direction", "postgres_to_stream"),)
    assert found["ds_sync_lag_seconds_count", to_pg] == 2
    assert found["ds_sync_lag_seconds_sum", to_pg] == 0.04
    assert found["ds_sync_lag_seconds_bucket", (*to_pg, ("le", "0.05"))] == 2
    assert found["ds_sync_lag_seconds_count", to_stream] == 1
    assert found["ds_sync_lag_seconds_bucket", (*to_stream, ("le", "1.0"))] == 0
    assert found["ds_sync_table_lag_seconds", (("table", "public.items"),)] == 2.0


def test_checkpoint_ages_name_the_oldest_streams_and_fold_the_rest() -> None:
    metrics = Metrics(top_streams=2)
    metrics.checkpoint_ages = {f"chat/room-{n}": float(n) for n in range(1, 101)}
    found = samples(metrics)
    ages = {
        dict(labels)["stream"]: value
        for (name, labels), value in found.items()
        if name == "ds_sync_checkpoint_age_seconds"
    }
    assert ages == {"chat/room-100": 100.0, "chat/room-99": 99.0, OTHERS: 98.0}
    assert found["ds_sync_streams_behind", ()] == 100


def test_no_stream_behind_means_no_age_series() -> None:
    found = samples(Metrics())
    assert not any(name == "ds_sync_checkpoint_age_seconds" for name, _ in found)
    assert found["ds_sync_streams_behind", ()] == 0


def test_a_mirror_shows_its_compaction_and_its_snapshots_age() -> None:
    metrics = Metrics()
    items = metrics.table("public.items")
    found = samples(metrics)
    # Before a first snapshot: no age, rather than a made-up one.
    assert ("ds_sync_table_snapshot_age_seconds", (("table", "public.items"),)) not in found
    items.compactions, items.retained_bytes, items.snapshot_bytes = 3, 5000, 1200
    items.snapshot_at = time.time() - 60
    found = samples(metrics)
    table = (("table", "public.items"),)
    assert found["ds_sync_table_compactions_total", table] == 3
    assert found["ds_sync_table_retained_bytes", table] == 5000
    assert found["ds_sync_table_snapshot_bytes", table] == 1200
    assert 59 <= found["ds_sync_table_snapshot_age_seconds", table] < 3600

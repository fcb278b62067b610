"""``Metrics`` as Prometheus metric families, built at each scrape.

Counters and gauges are read from ``Metrics``' fields when scraped, so the
components keep bumping plain integers. Label values are bounded: states,
directions, table names (configured), and at most ``top_streams`` stream
names in the checkpoint ages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prometheus_client.exposition import generate_latest
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector, CollectorRegistry

if TYPE_CHECKING:
    from collections.abc import Iterator

    from prometheus_client.metrics_core import Metric

    from ds_sync.metrics import Metrics, TableMetrics

OTHERS = "(others)"

_COUNTERS = (
    ("ds_sync_transactions", "Transactions committed to session_events", "transactions"),
    ("ds_sync_batches", "Read batches committed", "batches"),
    ("ds_sync_gaps", "410s recorded as gaps", "gaps"),
    ("ds_sync_unstorable_payloads", "jsonb refused them: stored as text", "unstorable_payloads"),
    ("ds_sync_conflicts", "Unique-key conflicts (each stops a stream)", "conflicts"),
    ("ds_sync_database_errors", "Failed transactions (retried)", "database_errors"),
    ("ds_sync_server_errors", "Failed requests to ds-server (retried)", "server_errors"),
    ("ds_sync_wakes", "Pull-wake claims handled", "wakes"),
    ("ds_sync_scans", "Listings of the synced streams", "scans"),
    ("ds_sync_stale_commits", "Commits the checkpoint compare-and-set refused (read again)",
     "stale_commits"),
    ("ds_sync_shards_gained", "Shard leases this process took", "shards_gained"),
    ("ds_sync_shards_lost", "Shard leases lost (not renewed in time, or fenced)", "shards_lost"),
    ("ds_sync_shards_released", "Shard leases handed back (balance, shutdown)",
     "shards_released"),
    ("ds_sync_sightings_sent", "Streams passed to the other processes of the group",
     "sightings_sent"),
)  # fmt: skip
_TABLE_FAMILIES = (
    ("ds_sync_table_changes", "counter", "Row changes delivered to pg-{table}", "changes"),
    ("ds_sync_table_batches", "counter", "Batches delivered to pg-{table}", "batches"),
    ("ds_sync_table_duplicates", "counter", "POSTs the server already had (204)", "duplicates"),
    ("ds_sync_table_resyncs", "counter", "Syncs of a table from scratch (reset)", "resyncs"),
    ("ds_sync_table_errors", "counter", "Failures of a table's sync (retried)", "errors"),
    ("ds_sync_table_lag_seconds", "gauge", "Last batch: last commit to delivery", "lag_seconds"),
    ("ds_sync_slot_wal_bytes", "gauge", "WAL the native feed's slot holds", "slot_wal_bytes"),
    ("ds_sync_table_compactions", "counter", "Snapshots of pg-{table} published", "compactions"),
    ("ds_sync_table_compaction_errors", "counter", "Failed compactions (retried)",
     "compaction_errors"),
    ("ds_sync_table_retained_bytes", "gauge", "pg-{table} bytes past its latest snapshot",
     "retained_bytes"),
    ("ds_sync_table_snapshot_bytes", "gauge", "pg-{table}'s latest snapshot (the table's state)",
     "snapshot_bytes"),
    ("ds_sync_table_snapshot_age_seconds", "gauge", "Since pg-{table}'s newest snapshot",
     "snapshot_age_seconds"),
    ("ds_sync_table_active", "gauge",
     "1: this process mirrors the table; 0: it is a standby waiting to take over", "active"),
    ("ds_sync_table_takeovers", "counter", "Times this process went from standby to active",
     "takeovers"),
)  # fmt: skip


class Exposition:
    """The Prometheus text of one ``Metrics``: its lag histograms and every other figure."""

    def __init__(self, metrics: Metrics) -> None:
        self._registry = CollectorRegistry(auto_describe=True)
        self._registry.register(metrics.lag)
        self._registry.register(Figures(metrics))

    def render(self) -> str:
        """The text exposition, read from the metrics now."""
        return generate_latest(self._registry).decode("utf-8")


class Figures(Collector):
    """Everything but the lag histograms (which ``Metrics`` owns)."""

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    def collect(self) -> Iterator[Metric]:
        m = self._metrics
        for name, help_text, attribute in _COUNTERS:
            yield CounterMetricFamily(name, help_text, value=getattr(m, attribute))
        yield from self._directions()
        yield GaugeMetricFamily(
            "ds_sync_shards_held", "Shards whose lease this process holds", value=m.shards_held
        )
        yield GaugeMetricFamily(
            "ds_sync_instances",
            "Live processes sharing the streams (this one included)",
            value=m.instances,
        )
        yield GaugeMetricFamily(
            "ds_sync_streams_skipped",
            "Matching streams not synced because they are not JSON",
            value=len(m.skipped_streams),
        )
        by_state = GaugeMetricFamily("ds_sync_streams", "Synced streams by state", labels=["state"])
        for state, count in sorted(m.streams_by_state.items()):
            by_state.add_metric([state], count)
        yield by_state
        yield from self._checkpoint_ages()
        yield from self._tables()

    def _directions(self) -> Iterator[Metric]:
        m = self._metrics
        tables = m.tables.values()
        events = CounterMetricFamily(
            "ds_sync_events",
            "Events synced: messages into session_events, row changes into pg-* streams",
            labels=["direction"],
        )
        events.add_metric(["stream_to_postgres"], m.events)
        events.add_metric(["postgres_to_stream"], sum(t.changes for t in tables))
        yield events
        retries = CounterMetricFamily(
            "ds_sync_retries",
            "Work started again after a failure: a stream's read, a table's sync",
            labels=["direction"],
        )
        retries.add_metric(["stream_to_postgres"], m.retries)
        retries.add_metric(["postgres_to_stream"], sum(t.errors for t in tables))
        yield retries

    def _checkpoint_ages(self) -> Iterator[Metric]:
        m = self._metrics
        ages = sorted(m.checkpoint_ages.items(), key=lambda item: item[1], reverse=True)
        family = GaugeMetricFamily(
            "ds_sync_checkpoint_age_seconds",
            "Streams behind: seconds since the checkpoint last moved; the oldest by name, "
            f"then the oldest of the rest as stream={OTHERS!r}",
            labels=["stream"],
        )
        for stream, age in ages[: m.top_streams]:
            family.add_metric([stream], age)
        rest = ages[m.top_streams :]
        if rest:
            family.add_metric([OTHERS], rest[0][1])
        yield family
        yield GaugeMetricFamily(
            "ds_sync_streams_behind",
            "Streams with data past their checkpoint",
            value=len(ages),
        )

    def _tables(self) -> Iterator[Metric]:
        tables = sorted(self._metrics.tables.items())
        for name, kind, help_text, attribute in _TABLE_FAMILIES:
            family: CounterMetricFamily | GaugeMetricFamily
            if kind == "counter":
                family = CounterMetricFamily(name, help_text, labels=["table"])
            else:
                family = GaugeMetricFamily(name, help_text, labels=["table"])
            for table, figures in tables:
                value = _figure(figures, attribute)
                if value is not None:
                    family.add_metric([table], value)
            yield family
        states: dict[str, int] = {}
        for _, figures in tables:
            states[figures.state] = states.get(figures.state, 0) + 1
        by_state = GaugeMetricFamily("ds_sync_tables", "Mirrored tables by state", labels=["state"])
        for state, count in sorted(states.items()):
            by_state.add_metric([state], count)
        yield by_state


def _figure(figures: TableMetrics, attribute: str) -> float | None:
    value: float | bool | None = getattr(figures, attribute)
    return float(value) if isinstance(value, bool) else value

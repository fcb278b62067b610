"""What ds-sync counts, and the lag it observes; ``metrics_export`` renders it.

The components bump plain fields (one event loop: no locks); lag goes into
histograms as it is observed. ``metrics_export.Exposition`` produces the
Prometheus text.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal

from prometheus_client import Histogram, disable_created_metrics

# A ``_created`` series per counter would double the scrape for what the
# process start time says.
disable_created_metrics()  # type: ignore[no-untyped-call]

Direction = Literal["stream_to_postgres", "postgres_to_stream"]
DIRECTIONS: tuple[Direction, ...] = ("stream_to_postgres", "postgres_to_stream")
# From a few ms (a commit right after the append) to minutes (a backlog).
_LAG_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)


@dataclass(slots=True)
class TableMetrics:
    """One mirrored table (Postgres → stream)."""

    state: str = "starting"  # starting, standby, snapshot, streaming, refused, stopped
    active: bool = False  # this process holds the table's lock (the others are standbys)
    takeovers: int = 0  # times this process went from standby to active
    changes: int = 0
    batches: int = 0
    duplicates: int = 0  # POSTs the server already had (204): resent after a restart
    resyncs: int = 0
    errors: int = 0
    lag_seconds: float = 0.0  # the last batch: its last commit → its delivery
    slot_wal_bytes: int | None = None  # WAL the native feed's slot holds
    # Compaction: the stream's bytes past its snapshot (as last seen), the snapshot's
    # size and when it was published (Unix time; None: no snapshot yet).
    compactions: int = 0
    compaction_errors: int = 0
    retained_bytes: int | None = None
    snapshot_bytes: int | None = None
    snapshot_at: float | None = None
    # Set by Metrics.table(): every batch's lag also goes to the direction's histogram.
    lag_histogram: Histogram | None = field(default=None, repr=False)

    @property
    def snapshot_age_seconds(self) -> float | None:
        """Seconds since the stream's newest snapshot was published; None before the first."""
        return None if self.snapshot_at is None else max(0.0, time.time() - self.snapshot_at)

    def delivered_lag(self, seconds: float) -> None:
        """A batch was delivered ``seconds`` after its last change committed."""
        self.lag_seconds = max(0.0, seconds)
        if self.lag_histogram is not None:
            self.lag_histogram.observe(self.lag_seconds)


@dataclass(slots=True)
class Metrics:
    """Totals since start; gauges are read from the stream table when rendered."""

    events: int = 0
    transactions: int = 0
    batches: int = 0
    gaps: int = 0
    unstorable_payloads: int = 0
    conflicts: int = 0
    database_errors: int = 0
    server_errors: int = 0
    retries: int = 0  # reads of a stream started again after a failure
    wakes: int = 0
    scans: int = 0
    stale_commits: int = 0  # chains the checkpoint compare-and-set refused
    # Sharing the streams with other processes (leases.py).
    shards_held: int = 0
    instances: int = 1
    shards_gained: int = 0
    shards_lost: int = 0
    shards_released: int = 0
    sightings_sent: int = 0
    skipped_streams: set[str] = field(default_factory=set)
    streams_by_state: dict[str, int] = field(default_factory=dict)
    tables: dict[str, TableMetrics] = field(default_factory=dict)
    # Streams with data past their checkpoint: seconds since it last moved.
    checkpoint_ages: dict[str, float] = field(default_factory=dict)
    # How many of them /metrics names; the rest are one series.
    top_streams: int = 10
    # Lag per direction; registered where the metrics are exposed.
    lag: Histogram = field(init=False, repr=False)
    _lag: dict[Direction, Histogram] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.lag = Histogram(
            "ds_sync_lag_seconds",
            "Lag per direction: stream→Postgres, an event's own timestamp to its commit in "
            "session_events; Postgres→stream, a change's commit to its delivery to the stream",
            ("direction",),
            buckets=_LAG_BUCKETS,
            registry=None,
        )
        self._lag = {direction: self.lag.labels(direction) for direction in DIRECTIONS}

    def committed(self, *, group_size: int, rows: int) -> None:
        """One transaction carrying ``group_size`` batches and ``rows`` rows."""
        self.transactions += 1
        self.batches += group_size
        self.events += rows

    def observe_lag(self, direction: Direction, seconds: float) -> None:
        """One batch's lag in ``direction``."""
        self._lag[direction].observe(max(0.0, seconds))

    def table(self, name: str) -> TableMetrics:
        """The figures of mirrored table ``name``, made on first use."""
        figures = self.tables.get(name)
        if figures is None:
            figures = TableMetrics(lag_histogram=self._lag["postgres_to_stream"])
            self.tables[name] = figures
        return figures

"""Streams and bytes stored, counted when scraped: nothing on the append path.

A scrape walks the store's in-memory stream table once (O(streams)). It
runs on the event loop (``endpoint`` serves there), the only thread that
changes that table, so the walk never sees it mid-change.

Besides the totals, the same walk sums what each *family* of streams
retains (``DS_METRICS__STREAM_FAMILIES``: path prefixes, so the label is a
bounded set) and the largest stream of each, next to the per-stream limit:
a family whose largest stream nears ``ds_server_retained_bytes_limit``
is about to get 413s (docs/operations.md, "Limits").

Per bucket (those created on /ds, and those ``DS_QUOTAS__BUCKETS`` names: a
bounded set), the running totals its quota counts and the quota, read from
the store's ledger (O(buckets)): a bucket nearing its quota is about to get
507s (docs/operations.md, "Bucket quotas").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from prometheus_client.metrics_core import GaugeMetricFamily
from prometheus_client.registry import Collector

from ds_server.metrics.families import REGISTRY

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence

    from prometheus_client.metrics_core import Metric

    from ds_server.stores._entry import Entry
    from ds_server.stores._quotas import Ledger
    from ds_server.stores.base import Store

OTHER_FAMILY = "other"


@dataclass(slots=True)
class _Family:
    streams: int = 0
    retained: int = 0
    largest: int = 0
    snapshots: int = 0


class StoredCollector(Collector):
    """The gauges of the store being served (none before one is watched)."""

    def __init__(self) -> None:
        self.store: Store | None = None
        self.families: tuple[str, ...] = ()
        self.retained_limit: int | None = None

    def family_of(self, path: str) -> str:
        """The first configured prefix ``path`` starts with, else ``other``."""
        return next((prefix for prefix in self.families if path.startswith(prefix)), OTHER_FAMILY)

    def collect(self) -> Iterator[Metric]:
        # Every backend built on the shared engine has its stream table; one
        # that is not (none yet) exports no stored gauges. Not imported: the
        # stores import this package.
        entries: Callable[[], Iterable[Entry]] | None = getattr(self.store, "entries", None)
        if entries is None:
            return
        streams = size = 0
        families = {family: _Family() for family in (*self.families, OTHER_FAMILY)}
        for entry in entries():
            state = entry.state
            if state.soft_deleted:
                continue
            streams += 1
            # What a reader can still get: retention may have dropped the start.
            retained = state.retained_bytes
            size += retained
            family = families[self.family_of(state.path)]
            family.streams += 1
            family.retained += retained
            family.largest = max(family.largest, retained)
            if state.snapshot is not None:
                family.snapshots += state.snapshot.size
        yield GaugeMetricFamily("ds_server_streams", "Streams the store holds", value=streams)
        yield GaugeMetricFamily(
            "ds_server_stored_bytes",
            "Payload bytes readable across those streams (before any snapshot's retention point "
            "is dropped; forks count their own appends)",
            value=size,
        )
        yield from _by_family(families)
        yield from _by_bucket(self.store)
        if self.retained_limit is not None:
            yield GaugeMetricFamily(
                "ds_server_retained_bytes_limit",
                "Bytes one stream may retain past its latest snapshot "
                "(DS_LIMITS__MAX_RETAINED_BYTES); appends beyond get 413",
                value=self.retained_limit,
            )


_FAMILY_GAUGES = (
    ("ds_server_family_streams", "Streams per family (DS_METRICS__STREAM_FAMILIES)", "streams"),
    ("ds_server_family_retained_bytes",
     "Bytes the family's streams retain: tail minus earliest retained offset, summed",
     "retained"),
    ("ds_server_family_max_retained_bytes",
     "The family's largest retained bytes of one stream (413 at ds_server_retained_bytes_limit)",
     "largest"),
    ("ds_server_family_snapshot_bytes", "Bytes of the family's latest snapshots, summed",
     "snapshots"),
)  # fmt: skip


def _by_family(families: dict[str, _Family]) -> Iterator[Metric]:
    for name, help_text, attribute in _FAMILY_GAUGES:
        gauge = GaugeMetricFamily(name, help_text, labels=["family"])
        for family, figures in families.items():
            gauge.add_metric([family], getattr(figures, attribute))
        yield gauge


_BUCKET_GAUGES = (
    ("ds_server_bucket_stored_bytes",
     "Bytes the bucket's quota counts: its streams' retained bytes plus their snapshots",
     "bytes"),
    ("ds_server_bucket_stored_streams", "Streams the bucket's quota counts", "streams"),
)  # fmt: skip


def _by_bucket(store: Store | None) -> Iterator[Metric]:
    ledger: Ledger | None = getattr(store, "ledger", None)
    buckets = getattr(store, "buckets", None)
    if ledger is None or buckets is None:
        return
    names = sorted({*buckets.ids(), *ledger.policy.buckets})
    for name, help_text, attribute in _BUCKET_GAUGES:
        gauge = GaugeMetricFamily(name, help_text, labels=["bucket"])
        for bucket in names:
            usage = ledger.usage.get(bucket)
            gauge.add_metric([bucket], getattr(usage, attribute) if usage is not None else 0)
        yield gauge
    limits = (
        ("ds_server_bucket_quota_bytes", "The bucket's byte quota (DS_QUOTAS__*); 507 beyond",
         "max_bytes"),
        ("ds_server_bucket_quota_streams", "The bucket's stream quota (DS_QUOTAS__*); 507 beyond",
         "max_streams"),
    )  # fmt: skip
    for name, help_text, attribute in limits:
        gauge = GaugeMetricFamily(name, help_text, labels=["bucket"])
        for bucket in names:
            limit = getattr(ledger.policy.quota_of(bucket), attribute)
            if limit is not None:  # no series: no limit
                gauge.add_metric([bucket], limit)
        yield gauge


STORED = StoredCollector()
REGISTRY.register(STORED)


def watch(
    store: Store | None, *, families: Sequence[str] = (), retained_limit: int | None = None
) -> None:
    """Report ``store`` from now on (None: stop), its streams grouped by the ``families``
    prefixes, beside the per-stream ``retained_limit``."""
    STORED.store = store
    STORED.families = tuple(families)
    STORED.retained_limit = retained_limit

"""Streams and bytes stored, counted when scraped: nothing on the append path.

A scrape walks the store's in-memory stream table once (O(streams)). It
runs on the event loop (``endpoint`` serves there), the only thread that
changes that table, so the walk never sees it mid-change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prometheus_client.metrics_core import GaugeMetricFamily
from prometheus_client.registry import Collector

from ds_server.metrics.families import REGISTRY

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from prometheus_client.metrics_core import Metric

    from ds_server.stores._entry import Entry
    from ds_server.stores.base import Store


class StoredCollector(Collector):
    """The gauges of the store being served (none before one is watched)."""

    def __init__(self) -> None:
        self.store: Store | None = None

    def collect(self) -> Iterator[Metric]:
        # Every backend built on the shared engine has its stream table; one
        # that is not (none yet) exports no stored gauges. Not imported: the
        # stores import this package.
        entries: Callable[[], Iterable[Entry]] | None = getattr(self.store, "entries", None)
        if entries is None:
            return
        streams = size = 0
        for entry in entries():
            state = entry.state
            if state.soft_deleted:
                continue
            streams += 1
            # What a reader can still get: retention may have dropped the start.
            size += state.tail - state.earliest_offset
        yield GaugeMetricFamily("ds_server_streams", "Streams the store holds", value=streams)
        yield GaugeMetricFamily(
            "ds_server_stored_bytes",
            "Payload bytes readable across those streams (before any snapshot's retention point "
            "is dropped; forks count their own appends)",
            value=size,
        )


STORED = StoredCollector()
REGISTRY.register(STORED)


def watch(store: Store | None) -> None:
    """Report ``store`` from now on (None: stop)."""
    STORED.store = store

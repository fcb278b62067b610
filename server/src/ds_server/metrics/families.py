"""Every metric ds-server exports, on one registry of its own.

The registry is the process's, not an app's: the store's writer threads and
the request hooks record into the same families whichever app is serving.
What is recorded per request (``tallies``, and requests in
``observability.request_metrics``) is kept in plain integers, bumped on the
event loop, and turned into metric families when scraped: prometheus-client's
own metric objects take a lock per update, which costs more than the rest of
a metric's bookkeeping. What other threads record (commits) uses those.
Names follow Prometheus conventions (``_total`` counters, ``_seconds`` and
``_bytes`` units); label values are bounded sets (operations, statuses,
reader kinds), never paths or stream names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Histogram, disable_created_metrics
from prometheus_client.metrics_core import CounterMetricFamily
from prometheus_client.registry import Collector

from ds_server.metrics.tallies import APPENDS, Appends

if TYPE_CHECKING:
    from collections.abc import Iterator

    from prometheus_client.metrics_core import Metric

# Every counter and histogram would export a ``_created`` timestamp series
# too: twice the lines per scrape for what the process start time says.
disable_created_metrics()  # type: ignore[no-untyped-call]

REGISTRY = CollectorRegistry(auto_describe=True)

# Request latency (``observability.request_metrics``): from 0.5 ms (an append to
# memory) to 30 s (a long-poll that waited its full timeout).
LATENCY_BUCKETS: tuple[float, ...] = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
)  # fmt: skip
# An fsync takes ~0.1 ms on a cache-backed disk, tens of ms on a slow one.
_COMMIT_BUCKETS = (
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0,
)  # fmt: skip
# The sqlite writer commits up to 512 mutations at once.
_BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)


class _AppendsCollector(Collector):
    def __init__(self, appends: Appends) -> None:
        self._appends = appends

    def collect(self) -> Iterator[Metric]:
        yield CounterMetricFamily(
            "ds_server_appended_messages",
            "Messages appended (a JSON array counts its elements)",
            value=self._appends.messages,
        )
        yield CounterMetricFamily(
            "ds_server_appended_bytes", "Payload bytes appended", value=self._appends.size
        )


REGISTRY.register(_AppendsCollector(APPENDS))
COMMIT_LATENCY = Histogram(
    "ds_server_store_commit_duration_seconds",
    "Time a durable backend's commit took (one transaction or one fsync)",
    buckets=_COMMIT_BUCKETS,
    registry=REGISTRY,
)
COMMIT_SIZE = Histogram(
    "ds_server_store_commit_writes",
    "Writes made durable by one commit (group commit: many share one)",
    buckets=_BATCH_BUCKETS,
    registry=REGISTRY,
)
DELIVERIES = Counter(
    "ds_server_subscription_deliveries",
    "Subscription deliveries by kind (webhook, wake-stream) and outcome (delivered, failed)",
    ("kind", "outcome"),
    registry=REGISTRY,
)

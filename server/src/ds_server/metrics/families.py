"""Every metric ds-server exports, on one registry of its own.

The registry is the process's, not an app's: the store's writer threads and
the request hooks record into the same families whichever app is serving.
Names follow Prometheus conventions (``_total`` counters, ``_seconds`` and
``_bytes`` units); label values are bounded sets (operations, statuses,
reader kinds), never paths or stream names.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics

# Every counter and histogram would export a ``_created`` timestamp series
# too: twice the lines per scrape for what the process start time says.
disable_created_metrics()  # type: ignore[no-untyped-call]

REGISTRY = CollectorRegistry(auto_describe=True)

# From 0.5 ms (an append to memory) to 30 s (a long-poll that waited its full timeout).
_LATENCY_BUCKETS = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
)  # fmt: skip
# An fsync takes ~0.1 ms on a cache-backed disk, tens of ms on a slow one.
_COMMIT_BUCKETS = (
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0,
)  # fmt: skip
# The sqlite writer commits up to 512 mutations at once.
_BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)

REQUESTS = Counter(
    "ds_server_requests",
    "HTTP requests by protocol operation and response status (status 0: no response sent)",
    ("operation", "status"),
    registry=REGISTRY,
)
LATENCY = Histogram(
    "ds_server_request_duration_seconds",
    "Time from a request's arrival to its response head (a long-poll's wait included)",
    ("operation",),
    buckets=_LATENCY_BUCKETS,
    registry=REGISTRY,
)
OPEN_READERS = Gauge(
    "ds_server_live_readers",
    "Open live reads by kind (sse, long-poll)",
    ("kind",),
    registry=REGISTRY,
)
APPENDED_MESSAGES = Counter(
    "ds_server_appended_messages",
    "Messages appended (a JSON array counts its elements)",
    registry=REGISTRY,
)
APPENDED_BYTES = Counter(
    "ds_server_appended_bytes",
    "Payload bytes appended",
    registry=REGISTRY,
)
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

"""Prometheus metrics of ds-server (``docs/operations.md`` lists them).

- ``families``: every metric, on the process's registry;
- ``operations``: a request's protocol operation, the bounded label;
- ``requests``: the request hook (counts, latency, open live reads);
- ``recorder``: the functions stores and features call (commits, appends,
  deliveries);
- ``stored``: streams and bytes stored, counted at scrape time;
- ``endpoint``: ``GET /metrics`` on its own loopback listener.
"""

from ds_server.metrics.endpoint import serve_metrics
from ds_server.metrics.families import REGISTRY
from ds_server.metrics.recorder import appended, delivery, enable, observe_commit
from ds_server.metrics.requests import RequestMetrics
from ds_server.metrics.stored import watch

__all__ = [
    "REGISTRY",
    "RequestMetrics",
    "appended",
    "delivery",
    "enable",
    "observe_commit",
    "serve_metrics",
    "watch",
]

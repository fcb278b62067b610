"""What an operator watches, above the routes: request metrics, ``/metrics``, and the logs.

- ``operations``: a request's protocol operation, the bounded metric label;
- ``request_metrics``: the request hook (counts, latency, open live reads);
- ``request_collector``: those tallies as metric families, when scraped;
- ``stored``: streams and bytes stored, counted at scrape time;
- ``endpoint``: ``GET /metrics`` on its own loopback listener;
- ``access_log``: the request hook that logs one line per request, in batches;
- ``request_lines``: those lines, made as text or JSON for a whole batch;
- ``line_writer``: the thread that writes them to stderr;
- ``log_format``: ``DS_LOG__FORMAT`` (text or JSON lines) for every logger.

The families themselves, and what records into them from below, are
``ds_server.metrics``.
"""

# Imported for its effect: registers the request tallies' collector.
from ds_server.observability import request_collector  # noqa: F401
from ds_server.observability.access_log import AccessLog
from ds_server.observability.endpoint import serve_metrics
from ds_server.observability.log_format import configure_logging
from ds_server.observability.request_metrics import RequestMetrics
from ds_server.observability.stored import watch

__all__ = ["AccessLog", "RequestMetrics", "configure_logging", "serve_metrics", "watch"]

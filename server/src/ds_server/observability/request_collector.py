"""The request tallies (``request_metrics``) as metric families, built at each scrape."""

from __future__ import annotations

from typing import TYPE_CHECKING

from prometheus_client.metrics_core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
)
from prometheus_client.registry import Collector

from ds_server.metrics.families import LATENCY_BUCKETS, REGISTRY
from ds_server.observability.request_metrics import LIVE_KINDS, TOTALS, RequestTotals

if TYPE_CHECKING:
    from collections.abc import Iterator

    from prometheus_client.metrics_core import Metric


class TotalsCollector(Collector):
    """Requests, their latency and the open live reads."""

    def __init__(self, totals: RequestTotals) -> None:
        self._totals = totals

    def collect(self) -> Iterator[Metric]:
        tallies = self._totals.tallies.values()
        requests = CounterMetricFamily(
            "ds_server_requests",
            "HTTP requests by protocol operation and response status (0: no response sent)",
            labels=["operation", "status"],
        )
        for tally in tallies:
            for status, count in sorted(tally.statuses.items()):
                requests.add_metric([tally.operation, str(status)], count)
        yield requests
        latency = HistogramMetricFamily(
            "ds_server_request_duration_seconds",
            "Time from a request's arrival to its response head (a long-poll's wait included)",
            labels=["operation"],
        )
        bounds = [*map(str, LATENCY_BUCKETS), "+Inf"]
        for tally in tallies:
            if not any(tally.counts):
                continue
            cumulative, buckets = 0, []
            for bound, count in zip(bounds, tally.counts, strict=True):
                cumulative += count
                buckets.append((bound, cumulative))
            latency.add_metric([tally.operation], buckets, tally.total)
        yield latency
        live = GaugeMetricFamily(
            "ds_server_live_readers", "Open live reads by kind (sse, long-poll)", labels=["kind"]
        )
        for op, kind in LIVE_KINDS.items():
            live.add_metric([kind], self._totals.tallies[op].open)
        yield live


REGISTRY.register(TotalsCollector(TOTALS))

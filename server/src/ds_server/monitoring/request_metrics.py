"""The request hook behind the per-operation metrics (see ``edge.layer.RequestHooks``).

Every label child is bound once: the latency histogram's per operation up
front, a request counter's per (operation, status) on first use, so a
request costs dictionary look-ups and no label objects.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ds_server.metrics.families import LATENCY, OPEN_READERS, REQUESTS
from ds_server.monitoring.operations import OPERATIONS, operation

if TYPE_CHECKING:
    from litestar.types import HTTPScope
    from prometheus_client.metrics import Counter, Gauge, Histogram

# Per-request values live in the ASGI scope (edge.layer says why).
_OPERATION = "ds.metrics.operation"
_STARTED = "ds.metrics.started"
_ANSWERED = "ds.metrics.answered"
_LIVE_KINDS = {"read_sse": "sse", "read_long_poll": "long-poll"}


class RequestMetrics:
    """Counts requests by operation and status, times them, and gauges open live reads."""

    def __init__(self) -> None:
        self._latency: dict[str, Histogram] = {op: LATENCY.labels(op) for op in OPERATIONS}
        self._live: dict[str, Gauge] = {
            op: OPEN_READERS.labels(kind) for op, kind in _LIVE_KINDS.items()
        }
        self._requests: dict[tuple[str, int], Counter] = {}

    def request_started(self, scope: HTTPScope) -> None:
        op = operation(scope["method"], scope["path"], scope["query_string"])
        scope[_OPERATION] = op  # type: ignore[literal-required]
        scope[_STARTED] = time.perf_counter()  # type: ignore[literal-required]
        live = self._live.get(op)
        if live is not None:
            live.inc()

    def response_started(self, scope: HTTPScope, status: int) -> None:
        op: str = scope[_OPERATION]  # type: ignore[literal-required]
        self._latency[op].observe(time.perf_counter() - scope[_STARTED])  # type: ignore[literal-required]
        scope[_ANSWERED] = True  # type: ignore[literal-required]
        self._count(op, status)

    def request_finished(self, scope: HTTPScope) -> None:
        op: str = scope[_OPERATION]  # type: ignore[literal-required]
        live = self._live.get(op)
        if live is not None:
            live.dec()
        if _ANSWERED not in scope:
            self._count(op, 0)  # the client went away first, or the server failed

    def _count(self, op: str, status: int) -> None:
        counter = self._requests.get((op, status))
        if counter is None:
            counter = self._requests[op, status] = REQUESTS.labels(op, str(status))
        counter.inc()

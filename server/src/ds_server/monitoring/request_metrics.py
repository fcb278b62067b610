"""The request hook behind the per-operation metrics (see ``edge.layer.RequestHooks``).

Hooks run on the event loop, one at a time, so the tallies are plain
integers and lists: a request costs a few dictionary and list updates and
no lock (prometheus-client's metric objects take one per update).
``request_collector`` turns them into metric families when scraped, on the
same loop (``endpoint``). Compiled with mypyc in the wheel: it runs on
every request.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from typing import TYPE_CHECKING

from ds_server.metrics.families import LATENCY_BUCKETS
from ds_server.monitoring.operations import OPERATIONS, operation, read_mode

if TYPE_CHECKING:
    from litestar.types import HTTPScope

# Per-request values live in the ASGI scope (edge.layer says why).
_OPERATION = "ds.metrics.operation"
_STARTED = "ds.metrics.started"
_ANSWERED = "ds.metrics.answered"
LIVE_KINDS = {"read_sse": "sse", "read_long_poll": "long-poll"}
# Operations by method and path, remembered: clients hit the same streams
# again and again. Emptied when full, so never more than this many paths.
_REMEMBERED_PATHS = 4096


class _Latency:
    """One operation's histogram: a count per bucket (the last is +Inf) and the sum."""

    def __init__(self) -> None:
        self.counts = [0] * (len(LATENCY_BUCKETS) + 1)
        self.total = 0.0


class RequestTotals:
    """Every request since start, by operation: statuses, latency, open live reads."""

    def __init__(self) -> None:
        self.statuses: dict[str, dict[int, int]] = {op: {} for op in OPERATIONS}
        self.latency: dict[str, _Latency] = {op: _Latency() for op in OPERATIONS}
        self.live: dict[str, int] = dict.fromkeys(LIVE_KINDS, 0)


class RequestMetrics:
    """The hook: counts requests by operation and status, times them, tracks live reads."""

    def __init__(self, totals: RequestTotals | None = None) -> None:
        self._totals = totals or TOTALS
        self._statuses = self._totals.statuses
        self._latency = self._totals.latency
        self._live = self._totals.live
        self._known: dict[str, dict[str, str]] = {}

    def request_started(self, scope: HTTPScope) -> None:
        method, path = scope["method"], scope["path"]
        known = self._known.get(method)
        if known is None:
            known = self._known[method] = {}
        op = known.get(path)
        if op is None:
            if len(known) >= _REMEMBERED_PATHS:
                known.clear()
            op = known[path] = operation(method, path, b"")
        if op == "read":
            query = scope["query_string"]
            if query:
                op = read_mode(query)
                if op in self._live:
                    self._live[op] += 1
        scope[_OPERATION] = op  # type: ignore[literal-required]
        scope[_STARTED] = time.perf_counter()  # type: ignore[literal-required]

    def response_started(self, scope: HTTPScope, status: int) -> None:
        op: str = scope[_OPERATION]  # type: ignore[literal-required]
        seconds = time.perf_counter() - scope[_STARTED]  # type: ignore[literal-required]
        latency = self._latency[op]
        latency.counts[bisect_left(LATENCY_BUCKETS, seconds)] += 1
        latency.total += seconds
        scope[_ANSWERED] = True  # type: ignore[literal-required]
        statuses = self._statuses[op]
        statuses[status] = statuses.get(status, 0) + 1

    def request_finished(self, scope: HTTPScope) -> None:
        op: str = scope[_OPERATION]  # type: ignore[literal-required]
        if op in self._live:
            self._live[op] -= 1
        if _ANSWERED not in scope:
            # The client went away first, or the server failed: status 0.
            statuses = self._statuses[op]
            statuses[0] = statuses.get(0, 0) + 1


TOTALS = RequestTotals()

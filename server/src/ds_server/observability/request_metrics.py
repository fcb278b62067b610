"""The request hook behind the per-operation metrics (``edge.layer.OpenRequestHook``).

Hooks run on the event loop, one at a time, so the tallies are plain
integers and lists: a request costs a few attribute and list updates and
no lock (prometheus-client's metric objects take one per update).
``request_collector`` turns them into metric families when scraped, on the
same loop (``endpoint``). Compiled with mypyc in the wheel: it runs on
every request, and ``ds_bench.instructions`` counts what it costs.
"""

from __future__ import annotations

from time import perf_counter
from typing import TYPE_CHECKING, Final

from ds_server.metrics.families import LATENCY_BUCKETS
from ds_server.observability.operations import OPERATIONS, operation, read_mode

if TYPE_CHECKING:
    from collections.abc import Callable

    from litestar.types import HTTPScope

# A request's state lives in the ASGI scope (edge.layer says why): one entry,
# its tally (the edge hands every call the request's start and status).
# (Final: mypyc makes these C constants, not module dictionary look-ups.)
_IN_FLIGHT: Final = "ds.metrics"
LIVE_KINDS = {"read_sse": "sse", "read_long_poll": "long-poll"}
# Operations by method and path, remembered: clients hit the same streams
# again and again. Emptied when full, so never more than this many paths.
_REMEMBERED_PATHS: Final = 4096
_BOUNDS: Final[tuple[float, ...]] = LATENCY_BUCKETS


class Tally:
    """One operation's requests: by status, their latency histogram, and how many are open."""

    def __init__(self, operation: str) -> None:
        self.operation = operation
        self.statuses: dict[int, int] = {}
        # A count per latency bucket (the last is +Inf), and their sum.
        self.counts: list[int] = [0] * (len(_BOUNDS) + 1)
        self.total: float = 0.0
        self.live = operation in LIVE_KINDS
        self.open = 0  # live reads in progress

    def count(self, status: int) -> None:
        self.statuses[status] = self.statuses.get(status, 0) + 1


class RequestTotals:
    """Every request since start, one tally per operation."""

    def __init__(self) -> None:
        self.tallies: dict[str, Tally] = {op: Tally(op) for op in OPERATIONS}


class RequestMetrics:
    """The hook (``edge.layer.OpenRequestHook``): counts requests by operation and status,
    times them, tracks live reads."""

    def __init__(self, totals: RequestTotals | None = None) -> None:
        self._tallies = (totals or TOTALS).tallies
        self._known: dict[str, dict[str, Tally]] = {}
        # An attribute, not the module's global: compiled, that is one look-up less per call.
        self._clock: Callable[[], float] = perf_counter

    def request_started(self, scope: HTTPScope, started: float) -> None:
        method, path = scope["method"], scope["path"]
        known = self._known.get(method)
        if known is None:
            known = self._known[method] = {}
        tally = known.get(path)
        if tally is None:
            if len(known) >= _REMEMBERED_PATHS:
                known.clear()
            tally = known[path] = self._tallies[operation(method, path, b"")]
        if tally.operation == "read":
            query = scope["query_string"]
            if query:
                tally = self._tallies[read_mode(query)]
                if tally.live:
                    tally.open += 1
        scope[_IN_FLIGHT] = tally  # type: ignore[typeddict-unknown-key]

    def response_started(self, scope: HTTPScope, started: float, status: int) -> None:
        tally: Tally = scope[_IN_FLIGHT]  # type: ignore[typeddict-item]
        seconds = self._clock() - started
        # The first bucket whose bound is at least ``seconds`` (the last is +Inf):
        # a compiled loop over unboxed floats, cheaper than calling bisect.
        index = 0
        for bound in _BOUNDS:
            if seconds <= bound:
                break
            index += 1
        tally.counts[index] += 1
        tally.total += seconds
        tally.count(status)

    def request_finished(self, scope: HTTPScope, started: float, status: int) -> None:
        tally: Tally = scope[_IN_FLIGHT]  # type: ignore[typeddict-item]
        if tally.live:
            tally.open -= 1
        if not status:
            tally.count(0)  # the client went away first, or the server failed


TOTALS = RequestTotals()

"""The request hook's tallies: buckets, statuses, live reads (a clock stands in for time)."""

from __future__ import annotations

from typing import Any

from ds_server.metrics.families import LATENCY_BUCKETS
from ds_server.observability.request_metrics import RequestMetrics, RequestTotals


def hook_with_clock(*readings: float) -> tuple[RequestMetrics, RequestTotals]:
    """A hook whose clock reads ``readings`` in turn, when responses start."""
    totals = RequestTotals()
    hook = RequestMetrics(totals)
    ticks = iter(readings)
    hook._clock = lambda: next(ticks)
    return hook, totals


def scope(method: str, path: str, query: bytes = b"") -> Any:
    return {"method": method, "path": path, "query_string": query}


def test_latency_lands_in_the_first_bucket_at_least_as_large() -> None:
    hook, totals = hook_with_clock(0.001, 1.0 + 0.0011, 40.0)
    for started in (0.0, 1.0, 2.0):
        request = scope("POST", "/v1/stream/a/b")
        hook.request_started(request, started)
        hook.response_started(request, started, 204)
        hook.request_finished(request, started, 204)
    tally = totals.tallies["append"]
    at = {
        bound: count for bound, count in zip((*LATENCY_BUCKETS, "+Inf"), tally.counts, strict=True)
    }
    assert at[0.001] == 1  # exactly on a bound: that bucket
    assert at[0.0025] == 1
    assert at["+Inf"] == 1  # beyond the largest bound
    assert sum(tally.counts) == 3
    assert round(tally.total, 6) == round(0.001 + 0.0011 + 38.0, 6)
    assert tally.statuses == {204: 3}


def test_a_request_ended_without_a_response_counts_as_status_zero() -> None:
    hook, totals = hook_with_clock()
    request = scope("GET", "/v1/stream/a/b", b"offset=-1")
    hook.request_started(request, 0.0)
    hook.request_finished(request, 0.0, 0)
    assert totals.tallies["read"].statuses == {0: 1}
    assert sum(totals.tallies["read"].counts) == 0


def test_live_reads_are_open_until_they_finish_and_the_cache_keeps_the_mode_apart() -> None:
    hook, totals = hook_with_clock(*[0.0] * 3)
    sse = scope("GET", "/v1/stream/a/b", b"offset=now&live=sse")
    poll = scope("GET", "/v1/stream/a/b", b"offset=now&live=long-poll")
    catch_up = scope("GET", "/v1/stream/a/b", b"offset=-1")
    for request in (sse, poll, catch_up):
        hook.request_started(request, 0.0)
    assert (totals.tallies["read_sse"].open, totals.tallies["read_long_poll"].open) == (1, 1)
    for request in (sse, poll, catch_up):
        hook.response_started(request, 0.0, 200)
        hook.request_finished(request, 0.0, 200)
    assert (totals.tallies["read_sse"].open, totals.tallies["read_long_poll"].open) == (0, 0)
    assert [totals.tallies[op].statuses for op in ("read_sse", "read_long_poll", "read")] == [
        {200: 1},
        {200: 1},
        {200: 1},
    ]

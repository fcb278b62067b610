"""Server memory: resident set size idle, with 1,000 idle SSE connections, with 10,000 streams."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

import httpx

from ds_bench._generators import python_argv, run_against
from ds_bench.fanout import open_subscribers
from ds_bench.model import Metric, Sample, Scenario

if TYPE_CHECKING:
    from ds_bench.model import Impl, Options
    from ds_bench.servers import ServerProcess

SSE_METRICS = (
    Metric("rss_idle", "RSS, fresh server", "MiB", "memory"),
    Metric("rss_sse", "RSS, 1,000 idle SSE connections", "MiB", "memory"),
)
STREAMS_METRICS = (Metric("rss_streams", "RSS, 10,000 small streams", "MiB", "memory"),)
MIB = 1024 * 1024
# Time for the server to settle (allocations freed, GC run) before a reading.
SETTLE_SECS = 2.0


def run_sse(server: ServerProcess, impl: Impl, options: Options) -> Sample:
    """RSS of a fresh server, then with 1,000 SSE connections waiting on one stream."""
    count = 1000
    time.sleep(SETTLE_SECS)
    idle = server.rss_bytes()
    url = f"{server.url}/v1/stream/idle-sse"
    httpx.put(url, headers={"Content-Type": "text/plain"}).raise_for_status()
    before = server.cpu_seconds()
    (holder,) = open_subscribers(url, count, processes=1, expect=0)
    try:
        time.sleep(SETTLE_SECS)
        held = server.rss_bytes()
        _, usage = holder.finish(timeout=60)
    finally:
        holder.abandon()
    return Sample(
        values={"rss_idle": idle / MIB, "rss_sse": held / MIB},
        generator=usage,
        server_cpu_s=server.cpu_seconds() - before,
        notes={"connections": count},
    )


def run_streams(server: ServerProcess, impl: Impl, options: Options) -> Sample:
    """RSS after creating 10,000 streams of one 100-byte message each."""
    count = 10_000
    args = {"base_url": server.url, "count": count, "size": 100, "concurrency": 32, "tag": "mem"}
    output, usage, server_cpu = run_against(
        server, python_argv("streams", json.dumps(args)), timeout=600
    )
    time.sleep(SETTLE_SECS)
    created = json.loads(output)["result"]
    return Sample(
        values={"rss_streams": server.rss_bytes() / MIB},
        generator=usage,
        server_cpu_s=server_cpu,
        notes={"streams_per_second": created["streams"] / created["seconds"]},
    )


SSE = Scenario("mem-sse", "Memory with 1,000 idle SSE connections", SSE_METRICS, run_sse)
STREAMS = Scenario("mem-streams", "Memory with 10,000 small streams", STREAMS_METRICS, run_streams)

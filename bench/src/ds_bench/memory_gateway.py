"""Memory per idle SSE stream behind Envoy: the server's and the gateway's.

10,000 SSE reads (1,000 quick) wait at the tail of one stream, through
Envoy with the committed config, arriving over HTTP/2 as browsers'
EventSource streams do, 100 to a connection; Envoy forwards each on an
HTTP/1.1 connection of its own. (Over HTTP/1.1 on the client side too,
Envoy would need 20,000 descriptors, more than these machines allow a
process.) Each figure is the process's growth in resident memory, read
2 s after the last stream was answered, divided by the streams.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

import httpx

from ds_bench._generators import Generator, node_argv
from ds_bench.gateway import Gateway
from ds_bench.model import Metric, Sample, Scenario

if TYPE_CHECKING:
    from ds_bench.model import Impl, Options
    from ds_bench.servers import ServerProcess

METRICS = (
    Metric("gw_server_kib", "server memory per idle SSE stream via Envoy", "KiB", "memory"),
    Metric(
        "gw_envoy_kib",
        "Envoy memory per idle SSE stream (HTTP/2 in, HTTP/1.1 out)",
        "KiB",
        "memory",
        versus_node=False,
    ),
)
KIB = 1024
SETTLE_SECS = 2.0
PER_CONNECTION = 100


def run(server: ServerProcess, impl: Impl, options: Options) -> Sample:
    """Envoy in front of ``server``; RSS of both before and with the idle streams."""
    count = 1000 if options.quick else 10_000
    path = "/v1/stream/idle-gateway"
    httpx.put(f"{server.url}{path}", headers={"Content-Type": "text/plain"}).raise_for_status()
    with Gateway(server.port) as gateway:
        time.sleep(SETTLE_SECS)
        server_before, envoy_before = server.rss_bytes(), gateway.rss_bytes()
        cpu_before = server.cpu_seconds()
        holder = Generator(
            node_argv(
                "sse-h2-idle.mjs",
                "--url",
                f"{gateway.url}{path}",
                "--streams",
                str(count),
                "--per-connection",
                str(PER_CONNECTION),
                "--token",
                gateway.token(),
            )
        )
        try:
            ready = json.loads(holder.read_line(timeout=600))
            if ready.get("ready") != count:
                raise RuntimeError(f"idle streams not ready: {ready}")
            time.sleep(SETTLE_SECS)
            server_after, envoy_after = server.rss_bytes(), gateway.rss_bytes()
            output, usage = holder.finish(timeout=120)
        finally:
            holder.abandon()
    closed = json.loads(output.strip().splitlines()[-1])["closed"]
    return Sample(
        values={
            "gw_server_kib": (server_after - server_before) / count / KIB,
            "gw_envoy_kib": (envoy_after - envoy_before) / count / KIB,
        },
        generator=usage,
        server_cpu_s=server.cpu_seconds() - cpu_before,
        notes={
            "streams": count,
            "connections": -(-count // PER_CONNECTION),
            "closed_before_the_end": closed,
            "server_rss_mib": server_after / KIB / KIB,
            "envoy_rss_mib": envoy_after / KIB / KIB,
        },
    )


SCENARIO = Scenario(
    "mem-gateway", "Memory per idle SSE stream through Envoy (10,000)", METRICS, run
)

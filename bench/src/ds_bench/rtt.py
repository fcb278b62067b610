"""Append→read round trip: the official benchmark's long-poll RTT method."""

from __future__ import annotations

import json
import statistics
from typing import TYPE_CHECKING

from ds_bench._generators import node_argv, run_against
from ds_bench.appends import percentile
from ds_bench.model import Metric, Sample, Scenario

if TYPE_CHECKING:
    from ds_bench.model import Impl, Options
    from ds_bench.servers import ServerProcess

METRICS = (
    Metric("rtt_p50", "append→read RTT p50", "ms", "latency"),
    Metric("rtt_p99", "append→read RTT p99", "ms", "latency"),
)


def run(server: ServerProcess, impl: Impl, options: Options) -> Sample:
    """``bench/node/rtt.mjs``: the official client reads by long-poll while it appends."""
    iterations = 40 if options.quick else 300
    argv = node_argv("rtt.mjs", "--url", server.url, "--iterations", str(iterations))
    output, usage, server_cpu = run_against(server, argv, timeout=600)
    rtt: list[float] = json.loads(output)["rtt_ms"]
    return Sample(
        values={"rtt_p50": statistics.median(rtt), "rtt_p99": percentile(rtt, 0.99)},
        generator=usage,
        server_cpu_s=server_cpu,
        notes={"iterations": len(rtt)},
    )


SCENARIO = Scenario("rtt", "Append→read round trip (long-poll)", METRICS, run)

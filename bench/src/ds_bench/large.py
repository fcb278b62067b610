"""Large messages: 1 MiB appends with the official client, concurrency 15."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ds_bench.model import Metric, Sample, Scenario
from ds_bench.throughput import client_appends

if TYPE_CHECKING:
    from ds_bench.model import Impl, Options
    from ds_bench.servers import ServerProcess

METRICS = (Metric("large_msgs", "TS client, 1 MiB, concurrency 15", "msg/s", "throughput"),)


def run(server: ServerProcess, impl: Impl, options: Options) -> Sample:
    """The official "large messages" run: 50 x 1 MiB in rounds of 15 concurrent appends.

    One run of 50 lasts a quarter of a second, too short to tell the servers
    apart from noise; the full benchmark repeats it ten times in a row.
    """
    sample = client_appends(
        server, messages=50, concurrency=15, size=1024 * 1024, iterations=2 if options.quick else 10
    )
    return Sample({"large_msgs": sample.values["msgs"]}, sample.generator, sample.server_cpu_s)


SCENARIO = Scenario("large", "Large messages (1 MiB)", METRICS, run)

"""Durable appends: ds-server's durable backend against the reference's file mode."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ds_bench._generators import Usage, python_argv, run_against
from ds_bench.model import Metric, Sample, Scenario

if TYPE_CHECKING:
    from ds_bench.model import Impl, Options
    from ds_bench.servers import ServerProcess

WRITERS = (1, 16, 64)
METRICS = tuple(
    Metric(
        f"durable_w{n}", f"durable appends, {n} writer{'s' if n > 1 else ''}", "msg/s", "throughput"
    )
    for n in WRITERS
)


def run(server: ServerProcess, impl: Impl, options: Options) -> Sample:
    """Per writer count, each writer appends 100 bytes back to back to its own stream."""
    seconds = 2.0 if options.quick else 5.0
    values: dict[str, float] = {}
    notes: dict[str, float | str] = {}
    usage = Usage(0.0, 0.0)
    server_cpu = 0.0
    for writers in WRITERS:
        args = {
            "base_url": server.url,
            "writers": writers,
            "seconds": seconds,
            "size": 100,
            "tag": f"durable-{writers}",
        }
        output, used, cpu = run_against(
            server, python_argv("appends", json.dumps(args)), timeout=seconds + 120
        )
        figures = json.loads(output)["result"]
        values[f"durable_w{writers}"] = figures["per_second"]
        notes[f"durable_w{writers}_p99_ms"] = figures["p99_ms"]
        usage = usage.then(used)
        server_cpu += cpu
    return Sample(values, usage, server_cpu, notes)


SCENARIO = Scenario("durable", "Durable appends (fsync per append)", METRICS, run, durable=True)

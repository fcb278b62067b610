"""Catch-up read: a large stream read from offset -1 to its end."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ds_bench._generators import python_argv, run_against, run_generator
from ds_bench.model import Metric, Sample, Scenario

if TYPE_CHECKING:
    from ds_bench.model import Impl, Options
    from ds_bench.servers import ServerProcess

METRICS = (Metric("catchup_mibs", "catch-up read from -1", "MiB/s", "throughput"),)
MIB = 1024 * 1024


def run(server: ServerProcess, impl: Impl, options: Options) -> Sample:
    """Fill one stream with 1 MiB appends (not timed), then read it all (aiohttp, identity)."""
    total = (32 if options.quick else 256) * MIB
    url = f"{server.url}/v1/stream/catchup"
    fill = {"url": url, "total": total, "chunk": MIB, "concurrency": 4}
    run_generator(python_argv("fill", json.dumps(fill)), timeout=600)
    output, usage, server_cpu = run_against(
        server, python_argv("catchup", json.dumps({"url": url})), timeout=600
    )
    result = json.loads(output)["result"]
    if result["bytes"] != total:
        raise RuntimeError(f"catch-up read {result['bytes']} bytes, expected {total}")
    return Sample(
        values={"catchup_mibs": total / MIB / result["seconds"]},
        generator=usage,
        server_cpu_s=server_cpu,
        notes={"requests": result["requests"], "seconds": result["seconds"]},
    )


SCENARIO = Scenario("catchup", "Catch-up read of a 256 MiB stream", METRICS, run)

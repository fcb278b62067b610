"""SSE fan-out with 10 % of the subscribers not reading, against the same with none.

Both phases run against the same server process, one after the other, each
on a stream of its own: first 900 readers beside 100 subscribers that
never read (``ds_bench.stalled``), then 1,000 readers. The slow phase goes
first, on the colder server, so any warm-up favours the clean phase. Each
phase starts with a 256 KiB append that fills every stalled connection's
buffers, so the server's writes to those clients wait from the first timed
message on; then the writer appends at the fan-out rate, and every
delivery to a reader is timed (``ds_bench.fanout``).

Target: the readers' delivery p99 with 10 % not reading within 10 % of the
p99 with none.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from typing import TYPE_CHECKING

import httpx

from ds_bench._generators import Generator
from ds_bench.fanout import deliver, open_subscribers, plan
from ds_bench.model import Metric, Sample, Scenario

if TYPE_CHECKING:
    from ds_bench.fanout import FanoutPlan
    from ds_bench.model import Impl, Options
    from ds_bench.servers import ServerProcess

METRICS = (
    Metric("slow_none_p99", "SSE fan-out p99, none slow", "ms", "latency"),
    Metric("slow_p99", "SSE fan-out p99 of the readers, 10 % not reading", "ms", "latency"),
    Metric(
        "slow_ratio",
        "SSE fan-out p99, 10 % not reading / none slow",
        "ratio",
        "latency",
        absolute_max=1.10,
        versus_node=False,
    ),
)
STALLED_SHARE = 10
PREFILL_BYTES = 256 * 1024
# Until the readers have taken the prefill.
SETTLE_SECS = 2.0


def run(server: ServerProcess, impl: Impl, options: Options) -> Sample:
    """The slow phase, then the clean one; p99 of each and their ratio."""
    full = plan(options)
    stalled = full.subscribers * STALLED_SHARE // 100
    slowed = _phase(server, full, "fanout-slow", stalled)
    clean = _phase(server, full, "fanout-clean", 0)
    none_p99, slow_p99 = clean.values["fanout_p99"], slowed.values["fanout_p99"]
    return Sample(
        values={"slow_none_p99": none_p99, "slow_p99": slow_p99, "slow_ratio": slow_p99 / none_p99},
        generator=slowed.generator.then(clean.generator),
        server_cpu_s=slowed.server_cpu_s + clean.server_cpu_s,
        notes={
            "stalled": stalled,
            "slow_p50_ms": slowed.values["fanout_p50"],
            "none_p50_ms": clean.values["fanout_p50"],
        },
    )


def _phase(server: ServerProcess, full: FanoutPlan, name: str, stalled: int) -> Sample:
    url = f"{server.url}/v1/stream/{name}"
    text = {"Content-Type": "text/plain"}
    httpx.put(url, headers=text).raise_for_status()
    readers = dataclasses.replace(full, subscribers=full.subscribers - stalled)
    holder = _hold_stalled(url, stalled) if stalled else None
    try:
        patience = readers.messages / readers.rate + 60
        subscribers = open_subscribers(
            url, readers.subscribers, readers.processes, readers.messages, patience
        )
        try:
            httpx.post(url, content=b"p" * PREFILL_BYTES, headers=text).raise_for_status()
            time.sleep(SETTLE_SECS)
            sample = deliver(server, readers, url, subscribers, server.cpu_seconds())
        finally:
            for proc in subscribers:
                proc.abandon()
        if holder is not None:
            _, used = holder.finish(timeout=60)
            sample = dataclasses.replace(sample, generator=sample.generator.alongside(used))
        return sample
    finally:
        if holder is not None:
            holder.abandon()


def _hold_stalled(url: str, count: int) -> Generator:
    holder = Generator([sys.executable, "-m", "ds_bench.stalled", url, str(count)])
    ready = json.loads(holder.read_line(timeout=120))
    if ready.get("ready") != count:
        holder.abandon()
        raise RuntimeError(f"stalled readers not ready: {ready}")
    return holder


SCENARIO = Scenario(
    "fanout-slow", "SSE fan-out with 10 % of 1,000 subscribers not reading", METRICS, run
)

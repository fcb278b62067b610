"""SSE fan-out: one writer at a steady rate, many SSE subscribers on one stream."""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx

from ds_bench._generators import Generator, node_argv
from ds_bench.appends import percentile
from ds_bench.model import Metric, Sample, Scenario

if TYPE_CHECKING:
    from ds_bench.model import Impl, Options
    from ds_bench.servers import ServerProcess

METRICS = (
    Metric("fanout_p50", "SSE fan-out delivery p50", "ms", "latency"),
    Metric("fanout_p99", "SSE fan-out delivery p99", "ms", "latency", absolute_max=50.0),
    Metric("fanout_rate", "SSE fan-out deliveries", "msg/s", "throughput"),
)


@dataclass(frozen=True, slots=True)
class FanoutPlan:
    subscribers: int
    processes: int
    rate: float
    messages: int


def plan(options: Options) -> FanoutPlan:
    """1,000 subscribers in two generator processes; the writer for 30 s (8 s quick)."""
    seconds = 8 if options.quick else 30
    rate = options.fanout_rate
    return FanoutPlan(
        subscribers=1000, processes=2, rate=rate, messages=max(1, round(rate * seconds))
    )


def open_subscribers(
    url: str, count: int, processes: int, expect: int, timeout: float = 300
) -> list[Generator]:
    """Start ``count`` SSE subscribers over ``processes`` processes; return once all are in.

    Each process ends by itself once every subscriber has ``expect`` messages,
    or after ``timeout`` seconds; with ``expect=0`` it holds until stdin closes.
    """
    share, extra = divmod(count, processes)
    procs = []
    for index in range(processes):
        n = share + (1 if index < extra else 0)
        procs.append(
            Generator(
                node_argv(
                    "sse-fanout.mjs",
                    "subscribe",
                    "--url",
                    url,
                    "--count",
                    str(n),
                    "--expect",
                    str(expect),
                    "--timeout",
                    str(timeout),
                )
            )
        )
    try:
        for proc in procs:
            ready = json.loads(proc.read_line(timeout=120))
            if ready.get("ready") is None:
                raise RuntimeError(f"subscriber process not ready: {ready}")
    except BaseException:
        for proc in procs:
            proc.abandon()
        raise
    return procs


def run(server: ServerProcess, impl: Impl, options: Options) -> Sample:
    """Subscribers connect first; then the writer appends at its rate; every delivery timed."""
    p = plan(options)
    url = f"{server.url}/v1/stream/fanout"
    httpx.put(url, headers={"Content-Type": "text/plain"}).raise_for_status()
    before = server.cpu_seconds()
    # Deliveries still missing a minute after the last append count as lost.
    patience = p.messages / p.rate + 60
    subscribers = open_subscribers(url, p.subscribers, p.processes, p.messages, patience)
    try:
        return deliver(server, p, url, subscribers, before)
    finally:
        for proc in subscribers:
            proc.abandon()


def deliver(
    server: ServerProcess, p: FanoutPlan, url: str, subscribers: list[Generator], before: float
) -> Sample:
    """Run the writer against ``subscribers``; every delivery timed, none may be missing."""
    writer = Generator(
        node_argv(
            "sse-fanout.mjs",
            "write",
            "--url",
            url,
            "--rate",
            str(p.rate),
            "--count",
            str(p.messages),
        )
    )
    written, usage = writer.finish(timeout=p.messages / p.rate + 120)
    sent = json.loads(written)
    latencies: list[float] = []
    delivered = complete = dropped = 0
    last_ns = 0
    for proc in subscribers:
        output, used = proc.finish(timeout=p.messages / p.rate + 120, close_stdin=False)
        usage = usage.alongside(used)
        result = json.loads(output)
        latencies += result["latencies_ms"]
        delivered += result["delivered"]
        complete += result["complete"]
        dropped += result["dropped"]
        last_ns = max(last_ns, int(result["last_ns"]))
    server_cpu = server.cpu_seconds() - before
    expected = p.subscribers * p.messages
    if delivered < expected:
        raise RuntimeError(
            f"fan-out lost deliveries: {delivered} of {expected}, "
            f"{complete} of {p.subscribers} subscribers complete, {dropped} connections dropped"
        )
    seconds = (last_ns - int(sent["start_ns"])) / 1e9
    return Sample(
        values={
            "fanout_p50": statistics.median(latencies),
            "fanout_p99": percentile(latencies, 0.99),
            "fanout_rate": delivered / seconds,
        },
        generator=usage,
        server_cpu_s=server_cpu,
        notes={
            "deliveries": delivered,
            "append_p50_ms": statistics.median(sent["post_ms"]),
        },
    )


SCENARIO = Scenario("fanout", "SSE fan-out to 1,000 subscribers", METRICS, run)

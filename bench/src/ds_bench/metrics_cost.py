"""``ds-bench metrics-cost``: unbatched POST throughput with metrics on and off, interleaved.

The ``post`` scenario of ``compare`` (wrk, 50 connections, 100-byte POSTs to
one stream, memory backend) against a fresh ds-server per run, alternately
with ``DS_METRICS__ENABLED=true`` and ``false``; the order flips every
repetition so neither side always runs first. Medians decide; the target is
metrics on within 5 % of off.

wrk's rate moves with whatever else the machine runs; so, beside it, the
CPU time one append takes inside the app (in-process, no sockets, as
``ds-bench probe app``), metrics on and off, interleaved; and, when valgrind
is installed, the instructions a whole server spends per POST
(``instructions``), which do not depend on other processes at all.
"""

from __future__ import annotations

import asyncio
import gc
import json
import shutil
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import uvloop

from ds_bench import _machine, instructions, throughput
from ds_bench.configurations import COMPILED_DIR
from ds_bench.model import Options
from ds_bench.probes import asgi_scope
from ds_bench.servers import DsServer

if TYPE_CHECKING:
    import argparse

    from ds_bench.configurations import Configuration

TARGET = 0.05
SIDES = ("on", "off")


@dataclass(frozen=True, slots=True)
class Feature:
    """What is switched on and off: by which setting, in which server configuration."""

    label: str  # "metrics", "request log"
    setting: str  # the DS_* variable, "true" or "false"
    # None: the build on this process's path with the request log off (ds-bench's default).
    configuration: Configuration | None = None
    # Added for the callgrind count only, and how long the server's deferred
    # work takes to be done there (see log_cost).
    count_env: dict[str, str] = field(default_factory=dict)
    count_settle_secs: float = 0.0

    def env(self, side: str) -> dict[str, str]:
        return {self.setting: "true" if side == "on" else "false"}

    def server(self, side: str, data_dir: Path) -> DsServer:
        label = f"{self.label} {side}"
        if self.configuration is None:
            return DsServer("memory", data_dir, self.env(side), label=label)
        return DsServer(
            "memory", data_dir, self.env(side), label=label, configuration=self.configuration
        )

    def instructions(self, side: str) -> float:
        """Instructions per POST under callgrind with the feature ``side``."""
        config = self.configuration
        env = {**self.env(side), **self.count_env}
        settle = self.count_settle_secs
        if config is None:
            return instructions.per_request(env, settle_secs=settle)
        return instructions.per_request(
            env, argv=config.argv, base_env=config.server_env(COMPILED_DIR), settle_secs=settle
        )


METRICS = Feature("metrics", "DS_METRICS__ENABLED")


@dataclass(frozen=True, slots=True)
class PostRun:
    metrics: str  # the feature "on" or "off"
    repetition: int
    msgs_per_s: float
    p99_ms: float
    server_cpu_s: float
    # The server's CPU time per request: what metrics add to it is their cost
    # even on a busy machine, where the rate moves with everyone else's load.
    cpu_us_per_request: float
    background: float  # other processes' share of the machine meanwhile


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cost = sub.add_parser(
        "metrics-cost", help="unbatched POST throughput, metrics on vs off, interleaved"
    )
    cost.add_argument("--repetitions", type=int, default=5, help="runs per side")
    cost.add_argument("--quick", action="store_true", help="4 s runs instead of 10 s")
    cost.add_argument(
        "--no-instructions", action="store_true", help="skip the callgrind count (minutes)"
    )


def run_once(side: str, repetition: int, options: Options, feature: Feature = METRICS) -> PostRun:
    """A fresh server with the feature ``side``, one wrk run."""
    data_dir = Path(tempfile.mkdtemp(prefix=f"ds-bench-cost-{side}-"))
    before = _machine.snapshot()
    try:
        with feature.server(side, data_dir) as server:
            sample = throughput.run_post(server, "ds", options)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    rate = sample.values["post_msgs"]
    requests = rate * float(sample.notes["seconds"])
    return PostRun(
        side,
        repetition,
        rate,
        sample.values["post_p99"],
        sample.server_cpu_s,
        sample.server_cpu_s / requests * 1e6,
        _machine.background_share(before, _machine.snapshot()),
    )


def compare(repetitions: int, quick: bool, feature: Feature = METRICS) -> list[PostRun]:
    """``repetitions`` runs per side, alternating, the order flipped each repetition."""
    options = Options(quick=quick, durable_backend="memory", data_root=Path(tempfile.gettempdir()))
    runs: list[PostRun] = []
    for repetition in range(repetitions):
        order = SIDES if repetition % 2 == 0 else SIDES[::-1]
        for side in order:
            done = run_once(side, repetition, options, feature)
            print(
                f"[{repetition + 1}/{repetitions}] {feature.label} {side:<3} "
                f"{done.msgs_per_s:>9,.0f} msg/s  p99 {done.p99_ms:6.2f} ms  "
                f"server CPU {done.cpu_us_per_request:5.1f} µs/request  "
                f"(others {done.background * 100:.0f} %)",
                flush=True,
            )
            runs.append(done)
    return runs


async def append_cpu_us(metrics_on: bool, appends: int) -> float:
    """CPU µs per 100-byte append through a memory-mode app (lifespan started, no sockets)."""
    from ds_server.app import asgi_app, create_app
    from ds_server.metrics import enable
    from ds_server.settings import MetricsSection, Settings, StorageSection

    enable(metrics_on)
    settings = Settings(
        storage=StorageSection(mode="memory"), metrics=MetricsSection(enabled=metrics_on)
    )
    app: Any = asgi_app(create_app(settings))
    started = asyncio.Event()

    async def startup() -> dict[str, Any]:
        return {"type": "lifespan.startup"}

    async def lifespan_send(message: dict[str, Any]) -> None:
        if message["type"] == "lifespan.startup.complete":
            started.set()

    lifespan = asyncio.ensure_future(
        app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, startup, lifespan_send)
    )
    await started.wait()
    headers = ((b"content-type", b"application/octet-stream"),)
    post = asgi_scope("POST", "/v1/stream/probe", headers=headers)

    async def body() -> dict[str, Any]:
        return {"type": "http.request", "body": b"x" * 100, "more_body": False}

    async def discard(message: dict[str, Any]) -> None:
        pass

    await app(asgi_scope("PUT", "/v1/stream/probe", headers=headers), body, discard)
    gc.collect()
    cpu = time.process_time()
    for _ in range(appends):
        # A fresh scope per request, as the HTTP protocol makes one.
        await app(dict(post), body, discard)
    spent = time.process_time() - cpu
    lifespan.cancel()
    return spent / appends * 1e6


def in_process(rounds: int, appends: int) -> dict[str, float]:
    """The least CPU per append of ``rounds`` interleaved rounds per side."""
    best = {side: float("inf") for side in SIDES}
    for round_ in range(rounds):
        for side in SIDES if round_ % 2 == 0 else SIDES[::-1]:
            spent = uvloop.run(append_cpu_us(side == "on", appends))
            best[side] = min(best[side], spent)
    return {"on_append_cpu_us": best["on"], "off_append_cpu_us": best["off"]}


def summary(runs: list[PostRun]) -> dict[str, float]:
    """Medians per side and the cost of metrics as a share of the rate without them."""
    on = statistics.median(r.msgs_per_s for r in runs if r.metrics == "on")
    off = statistics.median(r.msgs_per_s for r in runs if r.metrics == "off")
    return {
        "on_msgs_per_s": on,
        "off_msgs_per_s": off,
        "on_p99_ms": statistics.median(r.p99_ms for r in runs if r.metrics == "on"),
        "off_p99_ms": statistics.median(r.p99_ms for r in runs if r.metrics == "off"),
        "cost": 1 - on / off,
        "on_cpu_us_per_request": statistics.median(
            r.cpu_us_per_request for r in runs if r.metrics == "on"
        ),
        "off_cpu_us_per_request": statistics.median(
            r.cpu_us_per_request for r in runs if r.metrics == "off"
        ),
        "max_background": max(r.background for r in runs),
    }


def markdown(figures: dict[str, float], repetitions: int, feature: Feature = METRICS) -> str:
    verdict = "within" if figures["cost"] <= TARGET else "OUTSIDE"
    on_cpu, off_cpu = figures["on_cpu_us_per_request"], figures["off_cpu_us_per_request"]
    where = "" if feature.configuration is None else f" ({feature.configuration.name})"
    return "\n".join(
        [
            f"Unbatched POST (wrk, 50 connections, 100 B){where}, medians of {repetitions} "
            "interleaved runs per side:",
            "",
            f"| {feature.label} | msg/s | p99 ms | server CPU µs/request |",
            "|---|---:|---:|---:|",
            f"| on | {figures['on_msgs_per_s']:,.0f} | {figures['on_p99_ms']:.2f} | {on_cpu:.1f} |",
            f"| off | {figures['off_msgs_per_s']:,.0f} | {figures['off_p99_ms']:.2f} "
            f"| {off_cpu:.1f} |",
            "",
            f"{feature.label.capitalize()} cost {figures['cost'] * 100:+.1f} % of the rate "
            f"({verdict} the {TARGET * 100:.0f} % target) and "
            f"{(on_cpu / off_cpu - 1) * 100:+.1f} % server CPU per request; other processes "
            f"used up to {figures['max_background'] * 100:.0f} % of the machine during a run.",
            *_in_process_lines(figures, feature),
            *instruction_lines(figures, feature),
        ]
    )


def _in_process_lines(figures: dict[str, float], feature: Feature) -> list[str]:
    if "on_append_cpu_us" not in figures:
        return []
    on_us, off_us = figures["on_append_cpu_us"], figures["off_append_cpu_us"]
    return [
        "",
        f"In-process, CPU per append through the app (best of interleaved rounds): "
        f"{on_us:.1f} µs with {feature.label}, {off_us:.1f} µs without "
        f"({(on_us / off_us - 1) * 100:+.1f} %).",
    ]


def instruction_lines(figures: dict[str, float], feature: Feature) -> list[str]:
    if "on_instructions" not in figures:
        return []
    on, off = figures["on_instructions"], figures["off_instructions"]
    verdict = "within" if on / off - 1 <= TARGET else "OUTSIDE"
    return [
        "",
        f"Counted with callgrind, a whole server per 100-byte POST: {on:,.0f} instructions "
        f"with {feature.label}, {off:,.0f} without ({(on / off - 1) * 100:+.1f} %, {verdict} "
        f"the {TARGET * 100:.0f} % target).",
    ]


def count_instructions(feature: Feature) -> dict[str, float]:
    """Instructions per POST with the feature on and off, both servers counted at once.

    Counts don't depend on the machine's load, so the two run side by side.
    """
    with ThreadPoolExecutor(max_workers=2) as pool:
        counts = dict(zip(SIDES, pool.map(feature.instructions, SIDES), strict=True))
    for side, count in counts.items():
        print(f"{feature.label} {side}: {count:,.0f} instructions/request", flush=True)
    return {f"{side}_instructions": count for side, count in counts.items()}


def run(args: argparse.Namespace, results: Path) -> None:
    runs = compare(args.repetitions, args.quick)
    figures = summary(runs)
    figures |= in_process(rounds=6, appends=5_000 if args.quick else 20_000)
    if not args.no_instructions and shutil.which("valgrind"):
        figures |= count_instructions(METRICS)
    table = markdown(figures, args.repetitions)
    print()
    print(table)
    results.mkdir(parents=True, exist_ok=True)
    path = results / f"{time.strftime('%Y%m%dT%H%M%S')}-metrics-cost.json"
    path.write_text(
        json.dumps({"summary": figures, "runs": [asdict(r) for r in runs]}, indent=2) + "\n"
    )
    print(f"results: {path}")

"""The sync benchmark's results: Markdown tables, JSON and a PNG chart."""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

if TYPE_CHECKING:
    from pathlib import Path

    from ds_bench.sync_bench import LagFigures, ThroughputFigures

LAG_TARGET_MS = 100.0
THROUGHPUT_TARGET = 20_000.0
PICKUP_TARGET_MS = 2_000.0


def markdown(lags: list[LagFigures], rates: list[ThroughputFigures]) -> str:
    """Two tables: lag (append acknowledged → row committed) and drain throughput."""
    lines = [
        "| append acknowledged → row committed | events | p50 ms | p99 ms | max ms | target "
        "| other work |",
        "|---|---:|---:|---:|---:|---|---:|",
    ]
    for lag in lags:
        target = LAG_TARGET_MS if lag.rate else PICKUP_TARGET_MS
        met = "met" if lag.p99_ms < target else "missed"
        scenario = lag.scenario
        if lag.rate:
            scenario += f" (achieved {lag.achieved_rate:,.0f}/s"
            if lag.sync_cpu_us_per_event is not None:
                scenario += f"; ds-sync CPU {lag.sync_cpu_us_per_event:,.0f} µs/event"
            scenario += ")"
        lines.append(
            f"| {scenario} | {lag.events:,} | {lag.p50_ms:,.1f} | {lag.p99_ms:,.1f} | "
            f"{lag.max_ms:,.1f} | p99 < {target:,.0f} ms: {met} | {_other(lag.background)} |"
        )
    lines += [
        "",
        "| into Postgres | events | seconds | events/s | transactions | target | other work |",
        "|---|---:|---:|---:|---:|---|---:|",
    ]
    for rate in rates:
        met = "met" if rate.events_per_sec >= THROUGHPUT_TARGET else "missed"
        lines.append(
            f"| {rate.scenario} | {rate.events:,} | {rate.seconds:.2f} | "
            f"{rate.events_per_sec:,.0f} | {rate.transactions:,} | "
            f"≥ {THROUGHPUT_TARGET:,.0f}/s: {met} | {_other(rate.background)} |"
        )
    lines += [
        "",
        "*other work*: the share of the machine's CPU that processes outside the benchmark "
        "used during the scenario (the machine is shared).",
    ]
    return "\n".join(lines) + "\n"


def _other(share: float | None) -> str:
    return "n/a" if share is None else f"{share:.0%}"


def chart(
    lags: list[LagFigures], rates: list[ThroughputFigures], values: list[float], path: Path
) -> None:
    """Left: the lag distribution of the paced run; right: drain throughput per stream count."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    ordered = sorted(values)
    fractions = [(n + 1) / len(ordered) for n in range(len(ordered))]
    left.plot(ordered, fractions, color="#1565c0")
    left.axvline(LAG_TARGET_MS, color="#c62828", linestyle="--", label="target: p99 < 100 ms")
    left.axvline(
        lags[0].p99_ms, color="#2e7d32", linestyle=":", label=f"p99 {lags[0].p99_ms:.0f} ms"
    )
    left.set_xscale("log")
    left.set_xlabel("append acknowledged → row committed (ms, log scale)")
    left.set_ylabel("fraction of events")
    left.set_title(lags[0].scenario, fontsize=10)
    left.legend(fontsize=8, loc="lower right")
    labels = [f"{r.streams} stream{'s' * (r.streams > 1)}" for r in rates]
    speeds = [r.events_per_sec for r in rates]
    colours = ["#2e7d32" if s >= THROUGHPUT_TARGET else "#c62828" for s in speeds]
    right.bar(labels, speeds, color=colours)
    right.axhline(THROUGHPUT_TARGET, color="#c62828", linestyle="--", label="target ≥ 20,000/s")
    for index, speed in enumerate(speeds):
        right.text(index, speed, f"{speed:,.0f}", ha="center", va="bottom", fontsize=9)
    right.set_ylabel("events/s committed")
    right.set_title("draining a backlog into session_events", fontsize=10)
    right.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_results(
    out_dir: Path, lags: list[LagFigures], rates: list[ThroughputFigures], values: list[float]
) -> Path:
    """``sync-<time>.json``, ``.md`` and ``.png`` in ``out_dir``; the JSON's path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    payload = {
        "kind": "sync",
        "lag": [asdict(lag) for lag in lags],
        "throughput": [asdict(rate) for rate in rates],
    }
    path = out_dir / f"sync-{stamp}.json"
    path.write_text(json.dumps(payload, indent=2) + "\n")
    (out_dir / f"sync-{stamp}.md").write_text(markdown(lags, rates))
    chart(lags, rates, values, out_dir / f"sync-{stamp}.png")
    return path

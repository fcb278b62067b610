"""The sync benchmark's results: Markdown tables, JSON and a PNG chart."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from ds_bench import wakeup_cost

if TYPE_CHECKING:
    from pathlib import Path

    from matplotlib.axes import Axes

    from ds_bench.sync_figures import LagFigures, ThroughputFigures

LAG_TARGET_MS = 100.0
THROUGHPUT_TARGET = 20_000.0
PICKUP_TARGET_MS = 2_000.0
TABLE_LAG_TARGET_MS = 250.0


@dataclass(frozen=True, slots=True)
class Results:
    """What a run measured; a scenario not run leaves its list empty."""

    lags: list[LagFigures]  # stream → Postgres
    rates: list[ThroughputFigures]
    tables: list[LagFigures]  # Postgres → stream
    lag_values: list[float]  # every lag of the first paced stream → Postgres run
    table_values: list[float]  # every lag of the first Postgres → stream run
    instances: int = 1  # ds-sync processes sharing the work
    load: str = ""  # the machine's cores and load averages at the end of the run
    # CPU µs one wake-up costs here, by the sleep before it in ms (ds_bench.wakeup_cost).
    wakeup_us: dict[str, float] = field(default_factory=dict)


def markdown(results: Results) -> str:
    """A table per direction measured: lags, drain throughput, Postgres → stream lag."""
    lines: list[str] = [
        f"ds-sync processes: {results.instances}; machine: {results.load or 'n/a'}",
        "",
        f"What waking costs here: {wakeup_cost.describe(results.wakeup_us)}.",
        "",
    ]
    if results.lags:
        lines += [
            "| append acknowledged → row committed | events | p50 ms | p99 ms | max ms | target "
            "| ds-sync CPU µs/event | wake-ups/event | other work |",
            "|---|---:|---:|---:|---:|---|---:|---:|---:|",
        ]
        for lag in results.lags:
            target = LAG_TARGET_MS if lag.rate else PICKUP_TARGET_MS
            lines.append(_lag_row(lag, target))
        lines.append("")
    if results.rates:
        lines += [
            "| into Postgres | events | seconds | events/s | transactions | target "
            "| ds-sync CPU µs/event | other work |",
            "|---|---:|---:|---:|---:|---|---:|---:|",
        ]
        for rate in results.rates:
            met = "met" if rate.events_per_sec >= THROUGHPUT_TARGET else "missed"
            lines.append(
                f"| {rate.scenario} | {rate.events:,} | {rate.seconds:.2f} | "
                f"{rate.events_per_sec:,.0f} | {rate.transactions:,} | "
                f"≥ {THROUGHPUT_TARGET:,.0f}/s: {met} | {_cpu(rate.sync_cpu_us_per_event)} | "
                f"{_other(rate.background)} |"
            )
        lines.append("")
    if results.tables:
        lines += [
            "| commit → message readable on pg-items | changes | p50 ms | p99 ms | max ms "
            "| target | ds-sync CPU µs/change | wake-ups/change | other work |",
            "|---|---:|---:|---:|---:|---|---:|---:|---:|",
        ]
        lines += [_lag_row(lag, TABLE_LAG_TARGET_MS) for lag in results.tables]
        lines.append("")
    lines.append(
        "*ds-sync CPU*: the user + system time of the ds-sync process(es) over the measured "
        "window (summed over them when several share the work), divided by the events (or "
        "changes) of the window. *wake-ups*: the times ds-sync slept and was woken (voluntary "
        "context switches) per event; each wake-up has a CPU cost of its own, larger the "
        "longer the sleep before it, which is why the cost per event grows at low rates. "
        "*other work*: the share of "
        "the machine's CPU that processes outside the benchmark used during the scenario (the "
        "machine is shared)."
    )
    return "\n".join(lines) + "\n"


def _lag_row(lag: LagFigures, target: float) -> str:
    met = "met" if lag.p99_ms < target else "missed"
    scenario = lag.scenario
    if lag.rate:
        scenario += f" (achieved {lag.achieved_rate:,.0f}/s)"
    return (
        f"| {scenario} | {lag.events:,} | {lag.p50_ms:,.1f} | {lag.p99_ms:,.1f} | "
        f"{lag.max_ms:,.1f} | p99 < {target:,.0f} ms: {met} | {_cpu(lag.sync_cpu_us_per_event)} "
        f"| {_wakeups(lag.sync_wakeups_per_event)} | {_other(lag.background)} |"
    )


def _cpu(us: float | None) -> str:
    return "n/a" if us is None else f"{us:,.0f}"


def _wakeups(per_event: float | None) -> str:
    return "n/a" if per_event is None else f"{per_event:.2f}"


def _other(share: float | None) -> str:
    return "n/a" if share is None else f"{share:.0%}"


def chart(results: Results, path: Path) -> None:
    """One panel per scenario run: lag distributions and drain throughput."""
    panels = []
    if results.lag_values:
        panels.append("lag")
    if results.rates:
        panels.append("rates")
    if results.table_values:
        panels.append("tables")
    if not panels:
        return
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4), squeeze=False)
    for ax, panel in zip(axes[0], panels, strict=True):
        if panel == "lag":
            _distribution(
                ax,
                results.lag_values,
                results.lags[0],
                LAG_TARGET_MS,
                "append acknowledged → row committed (ms, log scale)",
                "events",
            )
        elif panel == "tables":
            _distribution(
                ax,
                results.table_values,
                results.tables[0],
                TABLE_LAG_TARGET_MS,
                "commit → message readable on pg-items (ms, log scale)",
                "changes",
            )
        else:
            _throughput(ax, results.rates)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _distribution(
    ax: Axes, values: list[float], lag: LagFigures, target: float, label: str, unit: str
) -> None:
    ordered = sorted(max(v, 0.01) for v in values)
    fractions = [(n + 1) / len(ordered) for n in range(len(ordered))]
    ax.plot(ordered, fractions, color="#1565c0")
    ax.axvline(target, color="#c62828", linestyle="--", label=f"target: p99 < {target:,.0f} ms")
    ax.axvline(lag.p99_ms, color="#2e7d32", linestyle=":", label=f"p99 {lag.p99_ms:.0f} ms")
    ax.set_xscale("log")
    ax.set_xlabel(label)
    ax.set_ylabel(f"fraction of {unit}")
    ax.set_title(lag.scenario, fontsize=10)
    ax.legend(fontsize=8, loc="lower right")


def _throughput(ax: Axes, rates: list[ThroughputFigures]) -> None:
    labels = [f"{r.streams} stream{'s' * (r.streams > 1)}" for r in rates]
    speeds = [r.events_per_sec for r in rates]
    colours = ["#2e7d32" if s >= THROUGHPUT_TARGET else "#c62828" for s in speeds]
    ax.bar(labels, speeds, color=colours)
    ax.axhline(THROUGHPUT_TARGET, color="#c62828", linestyle="--", label="target ≥ 20,000/s")
    for index, speed in enumerate(speeds):
        ax.text(index, speed, f"{speed:,.0f}", ha="center", va="bottom", fontsize=9)
    ax.set_ylabel("events/s committed")
    ax.set_title("draining a backlog into session_events", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")


def write_results(out_dir: Path, results: Results, stamp: str | None = None) -> Path:
    """``sync-<stamp>.json``, ``.md`` and ``.png`` in ``out_dir`` (stamp: now by default);
    the JSON's path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = stamp or time.strftime("%Y%m%dT%H%M%S")
    payload = {
        "kind": "sync",
        "instances": results.instances,
        "load": results.load,
        "lag": [asdict(lag) for lag in results.lags],
        "throughput": [asdict(rate) for rate in results.rates],
        "table_lag": [asdict(lag) for lag in results.tables],
    }
    path = out_dir / f"sync-{stamp}.json"
    path.write_text(json.dumps(payload, indent=2) + "\n")
    (out_dir / f"sync-{stamp}.md").write_text(markdown(results))
    chart(results, out_dir / f"sync-{stamp}.png")
    return path

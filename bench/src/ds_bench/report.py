"""Results of a comparison: medians and ratios, as JSON and a Markdown table."""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ds_bench.model import IMPL_LABELS

if TYPE_CHECKING:
    from pathlib import Path

    from ds_bench.compare import Run
    from ds_bench.model import Impl, Metric, Scenario


TIMES = "\N{MULTIPLICATION SIGN}"
# Other processes' share of the machine above which a run is flagged as noisy.
NOISY = 0.10


@dataclass(frozen=True, slots=True)
class Row:
    """One metric: the median of each server's samples, and their ratio."""

    scenario: str
    metric: Metric
    ds: list[float]
    node: list[float]
    # ds-server's configuration, when a run compared several.
    config: str = ""

    @property
    def ds_median(self) -> float | None:
        return statistics.median(self.ds) if self.ds else None

    @property
    def node_median(self) -> float | None:
        return statistics.median(self.node) if self.node else None

    @property
    def ratio(self) -> float | None:
        """ds-server / Node, of the medians (None for figures not compared with Node)."""
        ds, node = self.ds_median, self.node_median
        if ds is None or node is None or node == 0 or not self.metric.versus_node:
            return None
        return ds / node

    @property
    def met(self) -> bool | None:
        """Whether the target holds: >= 1 for throughput, <= 1 otherwise (and any bound)."""
        bound = self.metric.absolute_max
        if not self.metric.versus_node:
            if bound is None or self.ds_median is None:
                return None
            return self.ds_median <= bound
        ratio = self.ratio
        if ratio is None:
            return None
        ok = ratio >= 1.0 if self.metric.higher_is_better else ratio <= 1.0
        if bound is not None and self.ds_median is not None:
            ok = ok and self.ds_median < bound
        return ok

    @property
    def target(self) -> str:
        bound = self.metric.absolute_max
        if not self.metric.versus_node:
            return "—" if bound is None else f"≤ {bound:g}"
        text = f"≥ 1.0{TIMES}" if self.metric.higher_is_better else f"≤ 1.0{TIMES}"
        if bound is not None:
            text += f", < {bound:g} {self.metric.unit}"
        return text


@dataclass(frozen=True, slots=True)
class CpuRow:
    """Median CPU shares of one scenario against one server, as fractions of the machine."""

    scenario: str
    impl: Impl
    generator: float
    server: float
    background: float
    # The most other processes took in any one of these runs.
    background_max: float = 0.0
    # ds-server's configuration; for Node, "gateway" when behind Envoy.
    config: str = ""


def configurations(runs: list[Run]) -> dict[str, str]:
    """ds-server's configurations in these runs, in order, each with its Node route."""
    return {run.config: run.route for run in runs if run.impl == "ds"}


def _node_key(route: str) -> str:
    return "gateway" if route == "gateway" else ""


def summarize(scenarios: list[Scenario], runs: list[Run]) -> list[Row]:
    """One row per metric and configuration, in scenario order.

    Each configuration is compared with the Node reference reached the same
    way (directly, or through the same gateway).
    """
    rows = []
    for scenario in scenarios:
        ran = [run for run in runs if run.scenario == scenario.name]
        for config, route in configurations(runs).items():
            mine = [r for r in ran if (r.impl == "ds" and r.config == config)]
            if not mine:
                continue  # not run in this configuration (behind the gateway)
            theirs = [r for r in ran if r.impl == "node" and r.route == route]
            for metric in scenario.metrics:
                rows.append(
                    Row(
                        scenario.name,
                        metric,
                        [r.sample.values[metric.key] for r in mine if r.sample is not None],
                        [r.sample.values[metric.key] for r in theirs if r.sample is not None],
                        config,
                    )
                )
    return rows


def cpu_shares(scenarios: list[Scenario], runs: list[Run], cores: int) -> list[CpuRow]:
    """Load generator and server CPU per scenario and server: cpu time / wall time / cores."""
    rows = []
    sides: list[tuple[Impl, str]] = [("ds", c) for c in configurations(runs)]
    node_keys = dict.fromkeys(_node_key(r.route) for r in runs if r.impl == "node")
    sides += [("node", key) for key in node_keys]
    for scenario in scenarios:
        for impl, config in sides:
            gen, srv, other = [], [], []
            for run in runs:
                key = run.config if impl == "ds" else _node_key(run.route)
                if (
                    run.scenario == scenario.name
                    and run.impl == impl
                    and key == config
                    and run.sample
                ):
                    wall = run.sample.generator.wall_s * cores
                    gen.append(run.sample.generator.cpu_s / wall)
                    srv.append(run.sample.server_cpu_s / wall)
                    other.append(run.background)
            if gen:
                rows.append(
                    CpuRow(
                        scenario.name,
                        impl,
                        statistics.median(gen),
                        statistics.median(srv),
                        statistics.median(other),
                        max(other),
                        config,
                    )
                )
    return rows


def ratio_text(ratio: float | None) -> str:
    """A ratio as text, with three decimals where two would round a miss up to 1.00."""
    if ratio is None:
        return "—"
    digits = 3 if round(ratio, 2) == 1.0 and ratio != 1.0 else 2
    return f"{ratio:.{digits}f}{TIMES}"


def _num(value: float | None) -> str:
    if value is None:
        return "—"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def _build(meta: dict[str, object]) -> str:
    """``compiled; `` or ``plain Python; `` from the server's --version line, if recorded."""
    if meta.get("configurations"):
        return ""  # each configuration names its build
    described = str(meta.get("ds_server_build", ""))
    kind = described.rpartition("(")[2].rstrip(")")
    return f"{kind}; " if kind else ""


def _routes(meta: dict[str, object]) -> dict[str, str]:
    described = meta.get("configurations")
    if not isinstance(described, dict):
        return {}
    return {name: str(c.get("route", "direct")) for name, c in described.items()}


def _configuration_notes(meta: dict[str, object]) -> list[str]:
    """A line per ds-server configuration: what it is, and how Node was reached beside it."""
    described = meta.get("configurations")
    if not isinstance(described, dict) or not described:
        return []
    lines = ["", "ds-server configurations (the Node reference is reached the same way):", ""]
    for name, config in described.items():
        via = " Node behind the same Envoy." if config.get("route") == "gateway" else ""
        build = config.get("build")
        ran = f" (ran: {build})" if build else ""
        lines.append(f"- `{name}`: {config.get('description', '')}{ran}.{via}")
    return lines


def _baseline_note(meta: dict[str, object]) -> list[str]:
    if not meta.get("baseline"):
        return []
    return [
        "",
        f'**Before/after:** the "Node" columns are the ds-server build in '
        f"`{meta['baseline']}` (`--baseline`), not the Node reference; ds/Node is this "
        "build against that one.",
    ]


def markdown(rows: list[Row], cpu: list[CpuRow], meta: dict[str, object]) -> str:
    """The results table, the CPU table, and a line on what ran where."""
    lines = [
        f"Medians of {meta['repetitions']} interleaved repetitions"
        f"{' (quick sizes)' if meta.get('quick') else ''}, {meta['timestamp']}"
        f"{_duration(meta)}; "
        f"{meta['cores']} {TIMES} {meta['cpu']}; ds-server `{meta['ds_server_revision']}` "
        f"({_build(meta)}durable backend `{meta['durable_backend']}`), "
        f"@durable-streams/server {meta['node_server']} on Node {meta['node']}; "
        f"fan-out writer at {meta.get('fanout_rate', '?')} msg/s.",
        *_baseline_note(meta),
        *_configuration_notes(meta),
        "",
    ]
    several = len({row.config for row in rows}) > 1
    config_column = "configuration | " if several else ""
    lines += [
        f"| scenario | {config_column}metric | unit | ds-server | Node | ds/Node | target | met |",
        f"|---|{'---|' if several else ''}---|---|---:|---:|---:|---|---|",
    ]
    for row in rows:
        ratio = ratio_text(row.ratio)
        met = {True: "yes", False: "**no**", None: "—"}[row.met]
        config = f"{row.config} | " if several else ""
        lines.append(
            f"| {row.scenario} | {config}{row.metric.label} | {row.metric.unit} | "
            f"{_num(row.ds_median)} | {_num(row.node_median)} | {ratio} | {row.target} | {met} |"
        )
    lines += [
        "",
        "CPU used during the measurement, as a share of the whole machine "
        f"({meta['cores']} cores = 100 %):",
        "",
        f"| scenario | {config_column}load generator (vs ds-server) | load generator (vs Node) "
        "| ds-server | Node server | other processes (ds / Node runs) |",
        f"|---|{'---|' if several else ''}---:|---:|---:|---:|---:|",
    ]
    by_key = {(c.scenario, c.impl, c.config): c for c in cpu}
    routes = _routes(meta)
    for scenario, config in dict.fromkeys((c.scenario, c.config) for c in cpu if c.impl == "ds"):
        ds = by_key.get((scenario, "ds", config))
        node = by_key.get((scenario, "node", _node_key(routes.get(config, "direct"))))
        lines.append(
            f"| {scenario} | {f'{config} | ' if several else ''}{_pct(ds, 'generator')} "
            f"| {_pct(node, 'generator')} "
            f"| {_pct(ds, 'server')} | {_pct(node, 'server')} "
            f"| {_pct(ds, 'background')} / {_pct(node, 'background')} |"
        )
    noisy = [c for c in cpu if max(c.background, c.background_max) > NOISY]
    if noisy:
        worst = max(max(c.background, c.background_max) for c in noisy)
        lines += [
            "",
            f"**Caution:** other processes used up to {worst * 100:.0f} % of the machine "
            "during some of these runs; their numbers are not clean.",
        ]
    failures = meta.get("failures")
    if isinstance(failures, list) and failures:
        lines += ["", "Failed runs (left out of the medians):", ""]
        lines += [f"- {failure}" for failure in failures]
    return "\n".join(lines) + "\n"


def _duration(meta: dict[str, object]) -> str:
    seconds = meta.get("duration_s")
    return f" ({float(seconds) / 60:.0f} min)" if isinstance(seconds, int | float) else ""


def _pct(row: CpuRow | None, which: str) -> str:
    if row is None:
        return "—"
    share = {"generator": row.generator, "server": row.server, "background": row.background}
    return f"{share[which] * 100:.0f} %"


def to_json(rows: list[Row], cpu: list[CpuRow], runs: list[Run], meta: dict[str, object]) -> str:
    """Everything: the run's description, every sample, the medians and ratios."""
    payload = {
        "kind": "compare",
        "meta": meta,
        "metrics": [
            {
                "scenario": row.scenario,
                "config": row.config,
                "key": row.metric.key,
                "label": row.metric.label,
                "unit": row.metric.unit,
                "kind": row.metric.kind,
                "ds_server": {"median": row.ds_median, "samples": row.ds},
                "node": {"median": row.node_median, "samples": row.node},
                "ratio": row.ratio,
                "target": row.target,
                "met": row.met,
            }
            for row in rows
        ],
        "cpu_share": [asdict(c) for c in cpu],
        "runs": [
            {
                "scenario": run.scenario,
                "server": IMPL_LABELS[run.impl],
                "mode": run.server_mode,
                "config": run.config,
                "route": run.route,
                "repetition": run.repetition,
                "error": run.error,
                "values": run.sample.values if run.sample else None,
                "notes": run.sample.notes if run.sample else None,
                "generator_cpu_s": run.sample.generator.cpu_s if run.sample else None,
                "wall_s": run.sample.generator.wall_s if run.sample else None,
                "server_cpu_s": run.sample.server_cpu_s if run.sample else None,
                "background_share": run.background,
                "attempts": run.attempts,
            }
            for run in runs
        ],
    }
    return json.dumps(payload, indent=2, ensure_ascii=False)


def write(
    out_dir: Path,
    stamp: str,
    rows: list[Row],
    cpu: list[CpuRow],
    runs: list[Run],
    meta: dict[str, object],
) -> tuple[Path, Path]:
    """``<stamp>.json`` and ``<stamp>.md`` in ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / f"{stamp}.json"
    md_path = out_dir / f"{stamp}.md"
    json_path.write_text(to_json(rows, cpu, runs, meta) + "\n")
    md_path.write_text(markdown(rows, cpu, meta))
    return json_path, md_path


def load(
    payload: dict[str, Any], metrics: dict[str, Metric]
) -> tuple[list[Row], list[CpuRow], dict[str, object]]:
    """Rows, CPU rows and meta back from a results file's JSON (see ``to_json``)."""
    rows = [
        Row(
            m["scenario"],
            metrics[m["key"]],
            m["ds_server"]["samples"],
            m["node"]["samples"],
            m.get("config", ""),
        )
        for m in payload["metrics"]
    ]
    cpu = []
    for c in payload["cpu_share"]:
        kept = [
            r["background_share"]
            for r in payload["runs"]
            if r["scenario"] == c["scenario"]
            and r["server"] == IMPL_LABELS[c["impl"]]
            and _run_key(r) == c.get("config", "")
            and r["values"] is not None
        ]
        cpu.append(CpuRow(**c | {"background_max": max(kept, default=c["background"])}))
    return rows, cpu, payload["meta"]


def _run_key(run: dict[str, Any]) -> str:
    """What a stored run's CPU row is keyed by (see ``cpu_shares``)."""
    if run["server"] == IMPL_LABELS["ds"]:
        return str(run.get("config", ""))
    return _node_key(run.get("route", "direct"))


@dataclass(frozen=True, slots=True)
class DocsBlock:
    """A block of the docs page a comparison rewrites: its markers and its chart's file."""

    name: str
    image: str

    @property
    def start(self) -> str:
        return f"<!-- {self.name}:start -->"

    @property
    def end(self) -> str:
        return f"<!-- {self.name}:end -->"


# The full comparison (one configuration), and the configurations side by side.
RESULTS_BLOCK = DocsBlock("results", "benchmarks.png")
CONFIGURATIONS_BLOCK = DocsBlock("configurations", "benchmarks-configurations.png")
DOCS_START = RESULTS_BLOCK.start
DOCS_END = RESULTS_BLOCK.end


def update_docs(
    page: Path, table: str, chart: Path, source: str, block: DocsBlock = RESULTS_BLOCK
) -> None:
    """Replace ``block`` of ``page`` with ``table`` and the chart (copied next to it)."""
    image = page.parent / block.image
    image.write_bytes(chart.read_bytes())
    text = (
        f"{block.start}\n{table}\n![ds-server relative to the Node reference]({image.name})\n\n"
        f"Raw results: `{source}`.\n{block.end}"
    )
    page_text = page.read_text()
    start, end = page_text.find(block.start), page_text.find(block.end)
    if start < 0 or end < 0:
        raise RuntimeError(f"{page} has no {block.start} … {block.end} block")
    page.write_text(page_text[:start] + text + page_text[end + len(block.end) :])


def ratio_summary(rows: list[Row]) -> str:
    """The throughput ratios per configuration, for the end of a run's output."""
    shown = [r for r in rows if r.ratio is not None and r.metric.higher_is_better]
    if not shown:
        return ""
    width = max(len(r.config or "ds-server") for r in shown)
    lines = ["", "ds-server / Node, throughput (medians):"]
    for row in shown:
        assert row.ratio is not None
        lines.append(
            f"  {row.config or 'ds-server':<{width}}  {row.scenario:<8} "
            f"{_num(row.ds_median):>9} vs {_num(row.node_median):>9} {row.metric.unit:<6} "
            f"{ratio_text(row.ratio)}"
        )
    return "\n".join(lines)

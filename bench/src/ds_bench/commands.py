"""The ``compare`` and ``render`` subcommands of ``ds-bench``."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ds_bench import chart, compare, configurations, report
from ds_bench._environment import describe
from ds_bench.model import IMPL_LABELS, Options

if TYPE_CHECKING:
    import argparse

DOCS_PAGE = Path(__file__).resolve().parents[3] / "docs" / "benchmarks.md"


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser], results: Path) -> None:
    """Register ``compare`` and ``render``."""
    cmp = sub.add_parser("compare", help="ds-server side by side with the Node reference server")
    cmp.add_argument(
        "--scenarios",
        default="all",
        help=f"comma-separated: {', '.join([*compare.SCENARIOS, *compare.ALIASES])}",
    )
    cmp.add_argument("--repetitions", type=int, default=3, help="interleaved A/B rounds")
    cmp.add_argument("--quick", action="store_true", help="smaller sizes, for iterating")
    cmp.add_argument(
        "--durable-backend", default="sqlite", help="ds-server backend for the durable scenario"
    )
    cmp.add_argument(
        "--fanout-rate", type=float, default=5.0, help="fan-out writer, messages per second"
    )
    cmp.add_argument(
        "--max-background",
        type=float,
        default=0.10,
        help="repeat a run if other processes used more than this share of the machine",
    )
    cmp.add_argument("--retries", type=int, default=2, help="repeats of a disturbed run")
    cmp.add_argument(
        "--data-root",
        type=Path,
        default=Path(tempfile.gettempdir()),
        help="where servers keep their data (must be a real disk for the durable scenario)",
    )
    cmp.add_argument("--out", type=Path, default=results, help="results directory")
    cmp.add_argument(
        "--baseline",
        type=Path,
        help="run the ds-server build in this directory (an unpacked compiled wheel) "
        "in the Node reference's place, in the same (first) configuration: before/after "
        "of two revisions",
    )
    cmp.add_argument(
        "--configs",
        default="image",
        help="ds-server configurations, each compared with Node, interleaved: "
        f"comma-separated, of {', '.join(configurations.CONFIGURATIONS)}",
    )
    cmp.add_argument(
        "--compiled",
        type=Path,
        default=configurations.COMPILED_DIR,
        help="the compiled build (`make wheel` unpacks it there) for the compiled configurations",
    )
    cmp.add_argument(
        "--update-docs",
        action="store_true",
        help="put the table and chart of a full run (or of a run of several "
        "configurations) in docs/benchmarks.md",
    )
    render = sub.add_parser("render", help="redraw the table and chart of a compare results file")
    render.add_argument("results", type=Path, help="bench/results/<timestamp>.json")
    render.add_argument("--update-docs", action="store_true", help="also update the docs page")


def run_compare(args: argparse.Namespace) -> None:
    """Run the comparison, write its results, and maybe the docs page."""
    scenarios = compare.select(args.scenarios)
    configs = tuple(configurations.select(args.configs))
    if args.baseline is not None and not configs[0].compiled:
        raise SystemExit(
            f"--baseline is a compiled build: compare it in a compiled configuration "
            f"(image, compose or tuned), not {configs[0].name}"
        )
    options = Options(
        quick=args.quick,
        durable_backend=args.durable_backend,
        data_root=args.data_root,
        fanout_rate=args.fanout_rate,
        max_background=args.max_background,
        retries=args.retries,
        baseline=args.baseline,
        configurations=configs,
        compiled_dir=args.compiled,
    )
    if args.baseline is not None:
        # Tables and logs name the other side for what it is.
        IMPL_LABELS["node"] = f"baseline ({args.baseline})"
    meta: dict[str, object] = {
        "timestamp": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "repetitions": args.repetitions,
        "quick": args.quick,
        "durable_backend": args.durable_backend,
        "fanout_rate": args.fanout_rate,
        "max_background": args.max_background,
        "scenarios": [s.name for s in scenarios],
        "baseline": str(args.baseline) if args.baseline else None,
        **describe(args.data_root),
        "configurations": {
            c.name: {
                "description": c.description,
                "route": "gateway" if c.gateway else "direct",
                "build": configurations.check_build(c, args.compiled),
            }
            for c in configs
        },
    }
    if meta["data_root_fs"] in ("tmpfs", "ramfs"):
        print(f"warning: {args.data_root} is {meta['data_root_fs']}: fsync costs nothing there")

    def log(line: str) -> None:
        print(line, flush=True)

    started = time.perf_counter()
    runs = compare.compare(scenarios, args.repetitions, options, log)
    meta["duration_s"] = round(time.perf_counter() - started, 1)
    meta["failures"] = [
        f"{r.scenario} / {r.server_mode} / repetition {r.repetition + 1}: {r.error}"
        for r in runs
        if r.error is not None
    ]
    rows = report.summarize(scenarios, runs)
    cpu = report.cpu_shares(scenarios, runs, os.cpu_count() or 1)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    json_path, md_path = report.write(args.out, stamp, rows, cpu, runs, meta)
    png_path = chart.draw(rows, args.out / f"{stamp}.png", _title(meta, stamp))
    table = report.markdown(rows, cpu, meta)
    print()
    print(table)
    print(f"results: {json_path}\n         {md_path}\n         {png_path}")
    if args.update_docs:
        several = len(configs) > 1
        if args.quick or args.baseline or (not several and len(scenarios) < len(compare.SCENARIOS)):
            # The page shows full runs only; quick or partial runs stay in bench/results.
            print("docs/benchmarks.md left as it is (quick or partial run)")
        else:
            block = report.CONFIGURATIONS_BLOCK if several else report.RESULTS_BLOCK
            source = f"bench/results/{json_path.name}"
            report.update_docs(DOCS_PAGE, table, png_path, source, block)
            print(f"updated: {DOCS_PAGE}")
    print(report.ratio_summary(rows))
    if meta["failures"]:
        sys.exit(1)


def run_render(args: argparse.Namespace) -> None:
    """Rewrite ``<stamp>.md`` and ``<stamp>.png`` from ``<stamp>.json``."""
    path: Path = args.results
    metrics = {m.key: m for s in compare.SCENARIOS.values() for m in s.metrics}
    rows, cpu, meta = report.load(json.loads(path.read_text()), metrics)
    table = report.markdown(rows, cpu, meta)
    path.with_suffix(".md").write_text(table)
    png_path = chart.draw(rows, path.with_suffix(".png"), _title(meta, path.stem))
    print(table)
    if args.update_docs:
        report.update_docs(DOCS_PAGE, table, png_path, f"bench/results/{path.name}")
        print(f"updated: {DOCS_PAGE}")


def _title(meta: dict[str, object], stamp: str) -> str:
    quick = " (quick)" if meta.get("quick") else ""
    return f"ds-server vs Node reference — medians of {meta['repetitions']}{quick}, {stamp}"

"""``ds-bench log-cost``: unbatched POSTs with the request log on and off, as shipped.

The method of ``metrics-cost`` (wrk's rate, interleaved, and the
instructions a whole server spends per POST under callgrind), with
``DS_LOG__REQUESTS=true`` and ``false``, in the configurations users run:
``default`` (plain Python) and ``image`` (the compiled build). The target
is the log on within 5 % of off.

Lines are written in batches every ``DS_LOG__FLUSH_SECS`` (0.1 s). Under
callgrind the server runs some hundred times slower, so a 0.1 s batch
would hold a few lines where at full speed it holds over a thousand, and
the count would charge each line a batch's fixed costs (a timer, a loop
turn, a write) that full speed shares among a thousand. The count
therefore stretches the interval (``--count-flush-secs``, 10 s) so that a
batch holds about as many lines as at full speed; ``0.1`` counts as shipped.
It waits for a batch's interval after the warm-up and after the counted
requests, so what is counted is the counted requests' lines, all of them.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import asdict
from typing import TYPE_CHECKING

from ds_bench import metrics_cost
from ds_bench.configurations import COMPILED_DIR, CONFIGURATIONS, check_build
from ds_bench.metrics_cost import Feature

if TYPE_CHECKING:
    import argparse
    from pathlib import Path

BUILDS = {"plain": "default", "compiled": "image"}


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cost = sub.add_parser(
        "log-cost", help="unbatched POST throughput, request log on vs off, interleaved"
    )
    cost.add_argument(
        "--builds", default="plain,compiled", help="comma-separated: plain (default), compiled"
    )
    cost.add_argument("--repetitions", type=int, default=5, help="runs per side")
    cost.add_argument("--quick", action="store_true", help="4 s runs instead of 10 s")
    cost.add_argument(
        "--no-instructions", action="store_true", help="skip the callgrind count (minutes)"
    )
    cost.add_argument("--no-wrk", action="store_true", help="only the callgrind count")
    cost.add_argument(
        "--count-flush-secs",
        type=float,
        default=10.0,
        help="DS_LOG__FLUSH_SECS under callgrind, where the server is ~100x slower",
    )


def feature(build: str, count_flush_secs: float) -> Feature:
    """The request log, switched in the configuration of ``build``."""
    return Feature(
        "request log",
        "DS_LOG__REQUESTS",
        CONFIGURATIONS[BUILDS[build]],
        count_env={"DS_LOG__FLUSH_SECS": str(count_flush_secs)},
        count_settle_secs=count_flush_secs + 2,
    )


def run(args: argparse.Namespace, results: Path) -> None:
    report: dict[str, object] = {}
    tables = []
    for build in (b.strip() for b in args.builds.split(",") if b.strip()):
        switched = feature(build, args.count_flush_secs)
        assert switched.configuration is not None
        described = check_build(switched.configuration, COMPILED_DIR)
        figures: dict[str, float] = {}
        runs = []
        if not args.no_wrk:
            runs = metrics_cost.compare(args.repetitions, args.quick, switched)
            figures |= metrics_cost.summary(runs)
        if not args.no_instructions and shutil.which("valgrind"):
            figures |= metrics_cost.count_instructions(switched)
        report[build] = {
            "server": described,
            "count_flush_secs": args.count_flush_secs,
            "summary": figures,
            "runs": [asdict(r) for r in runs],
        }
        tables.append(f"**{described}**\n\n" + markdown(figures, args.repetitions, switched))
    print()
    print("\n\n".join(tables))
    results.mkdir(parents=True, exist_ok=True)
    path = results / f"{time.strftime('%Y%m%dT%H%M%S')}-log-cost.json"
    path.write_text(json.dumps(report, indent=2) + "\n")
    print(f"results: {path}")


def markdown(figures: dict[str, float], repetitions: int, switched: Feature) -> str:
    """The wrk table and the count, or the count alone when wrk did not run."""
    if "cost" in figures:
        return metrics_cost.markdown(figures, repetitions, switched)
    return "\n".join(metrics_cost.instruction_lines(figures, switched)).strip()

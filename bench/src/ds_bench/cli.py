"""``ds-bench``: run a benchmark and write its results under bench/results/."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from ds_bench import chart, compare, extensions, report, storage
from ds_bench._environment import describe
from ds_bench.model import Options

RESULTS = Path(__file__).resolve().parents[2] / "results"
DOCS_PAGE = Path(__file__).resolve().parents[3] / "docs" / "benchmarks.md"


def _storage(args: argparse.Namespace) -> None:
    backends = tuple(b for b in args.backends.split(",") if b)
    appends = storage.run_appends(backends, args.seconds)
    startup_backends = tuple(b for b in args.startup_backends.split(",") if b)
    startup = storage.run_startup(startup_backends, args.startup_streams, args.startup_bytes)
    path = storage.write_results(RESULTS, appends, startup)
    print(storage.markdown(appends, startup))
    print(f"results: {path}")


def _compare(args: argparse.Namespace) -> None:
    scenarios = compare.select(args.scenarios)
    options = Options(
        quick=args.quick,
        durable_backend=args.durable_backend,
        data_root=args.data_root,
        fanout_rate=args.fanout_rate,
        max_background=args.max_background,
        retries=args.retries,
    )
    meta: dict[str, object] = {
        "timestamp": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "repetitions": args.repetitions,
        "quick": args.quick,
        "durable_backend": args.durable_backend,
        "fanout_rate": args.fanout_rate,
        "max_background": args.max_background,
        "scenarios": [s.name for s in scenarios],
        **describe(args.data_root),
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
    png_path = chart.draw(
        rows,
        args.out / f"{stamp}.png",
        f"ds-server vs Node reference — medians of {args.repetitions}"
        f"{' (quick)' if args.quick else ''}, {stamp}",
    )
    table = report.markdown(rows, cpu, meta)
    print()
    print(table)
    print(f"results: {json_path}\n         {md_path}\n         {png_path}")
    if args.update_docs:
        if args.quick or len(scenarios) < len(compare.SCENARIOS):
            # The page shows full runs only; quick or partial runs stay in bench/results.
            print("docs/benchmarks.md left as it is (quick or partial run)")
        else:
            source = f"bench/results/{json_path.name}"
            report.update_docs(DOCS_PAGE, table, png_path, source)
            print(f"updated: {DOCS_PAGE}")
    if meta["failures"]:
        sys.exit(1)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="ds-bench")
    sub = parser.add_subparsers(dest="command", required=True)
    store = sub.add_parser("storage", help="append latency/throughput per backend, and start-up")
    store.add_argument("--backends", default=",".join(storage.BACKENDS))
    store.add_argument("--seconds", type=float, default=5.0, help="per writer count")
    store.add_argument("--startup-backends", default="file-durable,sqlite")
    store.add_argument("--startup-streams", type=int, default=10_000)
    store.add_argument("--startup-bytes", type=int, default=1024**3)
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
    cmp.add_argument("--out", type=Path, default=RESULTS, help="results directory")
    cmp.add_argument(
        "--update-docs",
        action="store_true",
        help="put the table and chart of a full run in docs/benchmarks.md",
    )
    extensions.add_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "storage":
        _storage(args)
    elif args.command == "extensions":
        extensions.run(args, RESULTS)
    else:
        _compare(args)


if __name__ == "__main__":
    main()

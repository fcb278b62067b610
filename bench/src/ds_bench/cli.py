"""``ds-bench``: run a benchmark and write its results under bench/results/."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ds_bench import (
    cluster_bench,
    commands,
    extensions,
    fairness,
    gateway_cost,
    log_cost,
    metrics_cost,
    probes,
    producers,
    storage,
    sync_bench,
)

if TYPE_CHECKING:
    from collections.abc import Callable

RESULTS = Path(__file__).resolve().parents[2] / "results"

# The commands that run a benchmark and write its results under RESULTS.
_WRITING_RESULTS: dict[str, Callable[[argparse.Namespace, Path], None]] = {
    "extensions": extensions.run,
    "sync": sync_bench.run,
    "cluster": cluster_bench.main,
    "metrics-cost": metrics_cost.run,
    "fairness": fairness.main,
    "producers": producers.run,
    "log-cost": log_cost.run,
    "gateway-cost": gateway_cost.run,
}


def _storage(args: argparse.Namespace) -> None:
    backends = tuple(b for b in args.backends.split(",") if b)
    appends = storage.run_appends(backends, args.seconds, args.quota_bytes)
    startup_backends = tuple(b for b in args.startup_backends.split(",") if b)
    startup = storage.run_startup(startup_backends, args.startup_streams, args.startup_bytes)
    path = storage.write_results(RESULTS, appends, startup)
    print(storage.markdown(appends, startup))
    print(f"results: {path}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="ds-bench")
    sub = parser.add_subparsers(dest="command", required=True)
    store = sub.add_parser("storage", help="append latency/throughput per backend, and start-up")
    store.add_argument("--backends", default=",".join(storage.BACKENDS))
    store.add_argument("--seconds", type=float, default=5.0, help="per writer count")
    store.add_argument("--startup-backends", default="file-durable,sqlite")
    store.add_argument("--startup-streams", type=int, default=10_000)
    store.add_argument("--startup-bytes", type=int, default=1024**3)
    store.add_argument(
        "--quota-bytes",
        type=int,
        default=0,
        help="a bucket quota for the append runs (their streams share one bucket); 0: none",
    )
    commands.add_parsers(sub, RESULTS)
    extensions.add_parser(sub)
    sync_bench.add_parser(sub)
    probes.add_parser(sub)
    cluster_bench.add_parser(sub)
    metrics_cost.add_parser(sub)
    fairness.add_parser(sub)
    producers.add_parser(sub)
    log_cost.add_parser(sub)
    gateway_cost.add_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "storage":
        _storage(args)
    elif args.command in _WRITING_RESULTS:
        _WRITING_RESULTS[args.command](args, RESULTS)
    elif args.command == "probe":
        probes.run(args)
    elif args.command == "render":
        commands.run_render(args)
    else:
        commands.run_compare(args)


if __name__ == "__main__":
    main()

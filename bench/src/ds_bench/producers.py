"""``ds-bench producers``: the SDK's AsyncIdempotentProducer vs the official TypeScript one.

Both clients write to the same ds-server (memory store, the build on
PYTHONPATH: ``make bench`` measures the compiled one), with the same message
sizes and the same shape of load (``producer_load.py`` and
``bench/node/producer-appends.mjs``): 1 and 16 producers in one client
process, each on a stream of its own, appending JSON messages in bursts,
then flushing. Runs alternate between the two clients, the order flipping
every repetition; medians of messages/s are reported, with the share of the
machine other processes used meanwhile.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ds_bench import _machine
from ds_bench.servers import NODE_DIR, DsServer

if TYPE_CHECKING:
    import argparse

CLIENTS = ("python", "typescript")
# Messages per run, shared among the producers.
TOTAL_MESSAGES = 200_000


@dataclass(frozen=True, slots=True)
class Run:
    client: str
    producers: int
    size: int
    repetition: int
    msgs_per_s: float
    client_cpu_s: float
    server_cpu_s: float
    # Other processes' share of the machine meanwhile (not the clients, not the server).
    background: float


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cmd = sub.add_parser(
        "producers", help="SDK AsyncIdempotentProducer vs the TypeScript IdempotentProducer"
    )
    cmd.add_argument("--producers", default="1,16", help="comma-separated producer counts")
    cmd.add_argument("--sizes", default="100,1024", help="comma-separated message sizes (bytes)")
    cmd.add_argument("--messages", type=int, default=TOTAL_MESSAGES, help="per run, all producers")
    cmd.add_argument("--repetitions", type=int, default=5)
    cmd.add_argument("--loop", choices=("uvloop", "asyncio"), default="uvloop")


def _command(
    client: str, url: str, producers: int, messages: int, size: int, loop: str
) -> list[str]:
    common = ["--url", url, "--producers", str(producers), "--messages", str(messages)]
    if client == "python":
        return [
            sys.executable,
            "-m",
            "ds_bench.producer_load",
            *common,
            "--size",
            str(size),
            "--loop",
            loop,
        ]
    return ["node", str(NODE_DIR / "producer-appends.mjs"), *common, "--size", str(size)]


def _once(
    client: str, server: DsServer, producers: int, size: int, args: argparse.Namespace, rep: int
) -> Run:
    per_producer = args.messages // producers
    server_cpu = server.cpu_seconds()
    before = _machine.snapshot()
    done = subprocess.run(
        _command(client, server.url, producers, per_producer, size, args.loop),
        capture_output=True,
        text=True,
        check=True,
        cwd=NODE_DIR if client == "typescript" else None,
    )
    after = _machine.snapshot()
    server_cpu = server.cpu_seconds() - server_cpu
    # The server is our child but not yet reaped: its CPU is not "other processes".
    server_share = server_cpu / ((after.wall - before.wall) * (os.cpu_count() or 1))
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["errors"]:
        raise RuntimeError(f"{client}: {result['errors']} batches failed")
    return Run(
        client=client,
        producers=producers,
        size=size,
        repetition=rep,
        msgs_per_s=result["messages"] / result["seconds"],
        client_cpu_s=result["cpu_s"],
        server_cpu_s=server_cpu,
        background=max(0.0, _machine.background_share(before, after) - server_share),
    )


def run(args: argparse.Namespace, results: Path) -> None:
    counts = [int(p) for p in args.producers.split(",") if p]
    sizes = [int(s) for s in args.sizes.split(",") if s]
    runs: list[Run] = []
    with (
        tempfile.TemporaryDirectory(prefix="ds-bench-producers-") as data,
        DsServer("memory", Path(data)) as server,
    ):
        for producers in counts:
            for size in sizes:
                for rep in range(args.repetitions):
                    order = CLIENTS if rep % 2 == 0 else tuple(reversed(CLIENTS))
                    for client in order:
                        done = _once(client, server, producers, size, args, rep)
                        runs.append(done)
                        print(
                            f"{client:10} producers={producers:2} size={size:5} rep={rep} "
                            f"{done.msgs_per_s:>10,.0f} msg/s  background {done.background:.0%}",
                            flush=True,
                        )
    table = markdown(runs, counts, sizes)
    print(table)
    results.mkdir(parents=True, exist_ok=True)
    path = results / f"producers-{time.strftime('%Y%m%dT%H%M%S')}.json"
    path.write_text(json.dumps({"loop": args.loop, "runs": [asdict(r) for r in runs]}, indent=2))
    print(f"results: {path}")


def markdown(runs: list[Run], counts: list[int], sizes: list[int]) -> str:
    """Medians per (producers, size): both clients' messages/s and their ratio."""
    lines = [
        "| producers | message | Python msg/s | TypeScript msg/s | Python / TS | background |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for producers in counts:
        for size in sizes:
            python = _median(runs, "python", producers, size)
            typescript = _median(runs, "typescript", producers, size)
            background = statistics.median(
                r.background for r in runs if (r.producers, r.size) == (producers, size)
            )
            lines.append(
                f"| {producers} | {size} B | {python:,.0f} | {typescript:,.0f} | "
                f"{python / typescript:.2f} | {background:.0%} |"
            )
    return "\n".join(lines)


def _median(runs: list[Run], client: str, producers: int, size: int) -> float:
    return statistics.median(
        r.msgs_per_s for r in runs if (r.client, r.producers, r.size) == (client, producers, size)
    )

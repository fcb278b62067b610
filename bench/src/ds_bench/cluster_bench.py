"""``ds-bench cluster``: ds-server replicas on one Postgres store, beside a single replica.

Two measurements per replica count, each replica a real process on the
postgres backend, all on one embedded Postgres:

- durable appends at 1, 16 and 64 writers, each writer on its own stream,
  the streams spread over the replicas as the gateway's path hashing
  spreads them (stream i on replica i mod n);
- SSE fan-out: subscribers spread evenly over the replicas, one writer
  appending through the first, so every delivery on another replica went
  through Postgres's change feed.

Replicas are addressed directly (no Envoy, no auth), so the figures are
the store's and the replicas', not the gateway's.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from ds_bench.appends import measure_appends
from ds_bench.fanout import FanoutPlan, deliver, open_subscribers
from ds_bench.servers import DsServer

if TYPE_CHECKING:
    import argparse

    from ds_bench.model import Sample

WRITERS = (1, 16, 64)
PAYLOAD = b"x" * 100


@dataclasses.dataclass(frozen=True, slots=True)
class Row:
    replicas: int
    what: str
    per_second: float
    p50_ms: float
    p99_ms: float


async def _appends(urls: list[str], writers: int, seconds: float, tag: str) -> Row:
    figures = await measure_appends(urls, writers, seconds, PAYLOAD, tag=tag)
    return Row(
        replicas=len(urls),
        what=f"appends, {writers} writers",
        per_second=figures.per_second,
        p50_ms=figures.p50_ms,
        p99_ms=figures.p99_ms,
    )


def _fanout(servers: list[DsServer], subscribers: int, seconds: float, rate: float) -> Row:
    plan = FanoutPlan(
        subscribers=subscribers, processes=len(servers), rate=rate, messages=round(rate * seconds)
    )
    path = f"/v1/stream/fanout-{len(servers)}"
    httpx.put(servers[0].url + path, headers={"Content-Type": "text/plain"}).raise_for_status()
    patience = plan.messages / plan.rate + 60
    share = subscribers // len(servers)
    groups = [
        open_subscribers(server.url + path, share, 1, plan.messages, patience)[0]
        for server in servers
    ]
    before = servers[0].cpu_seconds()
    plan = FanoutPlan(share * len(servers), len(servers), rate, plan.messages)
    try:
        sample: Sample = deliver(servers[0], plan, servers[0].url + path, groups, before)
    finally:
        for group in groups:
            group.abandon()
    return Row(
        replicas=len(servers),
        what=f"SSE fan-out, {plan.subscribers} subscribers ({rate:g} msg/s)",
        per_second=sample.values["fanout_rate"],
        p50_ms=sample.values["fanout_p50"],
        p99_ms=sample.values["fanout_p99"],
    )


def run(replica_counts: list[int], seconds: float, subscribers: int, rate: float) -> list[Row]:
    from ds_stack.postgres import EmbeddedPostgres, PostgresConfig

    rows: list[Row] = []
    data_dir = Path(tempfile.mkdtemp(prefix="ds-bench-cluster-pg-"))
    postgres = EmbeddedPostgres(PostgresConfig(data_dir=data_dir))
    try:
        postgres.start()
        url = postgres.create_database("bench")
        for count in replica_counts:
            env = {
                "DS_STORAGE__POSTGRES_URL": url,
                "DS_STORAGE__POSTGRES_SCHEMA": f"bench_{count}",
            }
            with tempfile.TemporaryDirectory(prefix="ds-bench-cluster-") as scratch:
                servers = [
                    DsServer("postgres", Path(scratch), env, label=f"replica {i + 1}")
                    for i in range(count)
                ]
                try:
                    for server in servers:
                        server.start()
                    urls = [server.url for server in servers]
                    for writers in WRITERS:
                        row = asyncio.run(_appends(urls, writers, seconds, f"r{count}"))
                        rows.append(row)
                        print(_line(row), flush=True)
                    row = _fanout(servers, subscribers, seconds, rate)
                    rows.append(row)
                    print(_line(row), flush=True)
                finally:
                    for server in servers:
                        server.stop()
    finally:
        postgres.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    return rows


def _line(row: Row) -> str:
    return (
        f"| {row.replicas} | {row.what} | {row.per_second:,.0f} | "
        f"{row.p50_ms:.2f} | {row.p99_ms:.2f} |"
    )


def markdown(rows: list[Row]) -> str:
    head = [
        "| replicas | measurement | per second | p50 ms | p99 ms |",
        "|---:|---|---:|---:|---:|",
    ]
    return "\n".join(head + [_line(row) for row in rows]) + "\n"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("cluster", help="postgres-store replicas: appends and SSE fan-out")
    parser.add_argument("--replicas", default="1,3", help="replica counts to compare")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--subscribers", type=int, default=300)
    parser.add_argument("--rate", type=float, default=5.0, help="fan-out writer, msg/s")


def main(args: argparse.Namespace, results: Path) -> None:
    counts = [int(part) for part in args.replicas.split(",")]
    print(markdown([]), end="", flush=True)
    rows = run(counts, args.seconds, args.subscribers, args.rate)
    results.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    (results / f"cluster-{stamp}.md").write_text(markdown(rows))
    (results / f"cluster-{stamp}.json").write_text(
        json.dumps([dataclasses.asdict(row) for row in rows], indent=2)
    )
    print(f"results: {results}/cluster-{stamp}.md")

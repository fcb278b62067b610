"""``ds-bench gateway-cost``: what a request costs ds-server behind the gateway, in instructions.

Behind Envoy, ds-server receives each POST with the headers Envoy adds (the
verified token's payload, a request id, the forwarding headers) and, in
gateway mode (``DS_AUTH__MODE=gateway``), checks the payload's scopes. Under
callgrind (``instructions.per_request``), for each configuration named, a
whole server's instructions per 100-byte POST:

- ``direct``: the POST wrk sends straight to the server, auth off;
- ``forwarded``: the same POST as Envoy forwards it, auth off;
- ``gateway``: as Envoy forwards it, in the configuration as deployed
  (its build, flags and settings: gateway mode on).

Counts don't move with the machine's load, unlike wrk's rates.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from ds_bench import instructions
from ds_bench.configurations import COMPILED_DIR, CONFIGURATIONS, check_build

if TYPE_CHECKING:
    import argparse
    from pathlib import Path

# As in log-cost: under callgrind the request log's batches are stretched to
# hold about as many lines as at full speed, and waited for (log_cost.py).
_FLUSH_SECS = 10.0
_COUNT_ENV = {"DS_LOG__FLUSH_SECS": str(_FLUSH_SECS)}
VARIANTS = ("direct", "forwarded", "gateway")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cost = sub.add_parser(
        "gateway-cost",
        help="instructions per POST: direct, as Envoy forwards it, and in gateway mode",
    )
    cost.add_argument(
        "--configs", default="dev,compose", help="comma-separated configurations (behind Envoy)"
    )
    cost.add_argument("--requests", type=int, default=2000, help="counted POSTs per count")


def count(config_name: str, variant: str, requests: int) -> float:
    """Instructions per POST of ``variant`` in the configuration ``config_name``."""
    config = CONFIGURATIONS[config_name]
    base_env = config.server_env(COMPILED_DIR)
    if variant != "gateway":
        base_env = {k: v for k, v in base_env.items() if k != "DS_AUTH__MODE"}
    request = instructions.POST if variant == "direct" else instructions.FORWARDED_POST
    return instructions.per_request(
        _COUNT_ENV,
        requests=requests,
        argv=config.argv,
        base_env=base_env,
        settle_secs=_FLUSH_SECS + 2,
        request=request,
    )


def run(args: argparse.Namespace, results: Path) -> None:
    names = [n.strip() for n in args.configs.split(",") if n.strip()]
    builds = {name: check_build(CONFIGURATIONS[name], COMPILED_DIR) for name in names}
    jobs = [(name, variant) for name in names for variant in VARIANTS]
    # callgrind runs one thread: one count per core.
    with ThreadPoolExecutor(2) as pool:
        counts = list(pool.map(lambda job: count(job[0], job[1], args.requests), jobs))
    figures = {f"{name} {variant}": n for (name, variant), n in zip(jobs, counts, strict=True)}
    lines = [
        "| configuration | direct | as Envoy forwards it | in gateway mode |",
        "|---|---:|---:|---:|",
    ]
    for name in names:
        row = " | ".join(f"{figures[f'{name} {v}']:,.0f}" for v in VARIANTS)
        lines.append(f"| `{name}` | {row} |")
    table = "\n".join(lines)
    print(table)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    path = results / f"{stamp}-gateway-cost.json"
    path.write_text(
        json.dumps({"builds": builds, "requests": args.requests, "instructions": figures}, indent=2)
    )
    print(f"results: {path}")

"""Small-message throughput: the official client with its batching, and unbatched POSTs (wrk)."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from ds_bench._generators import node_argv, run_against, run_generator
from ds_bench.model import Metric, Sample, Scenario

if TYPE_CHECKING:
    from ds_bench.model import Impl, Options
    from ds_bench.servers import ServerProcess

CLIENT_METRICS = (Metric("client_msgs", "TS client, 100 B, concurrency 75", "msg/s", "throughput"),)
POST_METRICS = (
    Metric("post_msgs", "unbatched POST, 100 B, 50 connections", "msg/s", "throughput"),
    Metric("post_p99", "unbatched POST p99", "ms", "latency"),
)

WRK_CONNECTIONS = 50
WRK_THREADS = 1
_WRK_SCRIPT = """\
wrk.method = "POST"
wrk.body = string.rep("x", {size})
wrk.headers["Content-Type"] = "application/octet-stream"
"""
_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def wrk_script(size: int, token: str | None = None) -> str:
    """wrk's Lua script: POST ``size`` bytes, with the token if one is needed."""
    script = _WRK_SCRIPT.format(size=size)
    if token is not None:
        script += f'wrk.headers["Authorization"] = "Bearer {token}"\n'
    return script


def client_appends(
    server: ServerProcess, *, messages: int, concurrency: int, size: int, iterations: int
) -> Sample:
    """``bench/node/client-appends.mjs``: rounds of concurrent ``stream.append()`` calls."""
    argv = node_argv(
        "client-appends.mjs",
        "--url",
        server.url,
        "--messages",
        str(messages),
        "--concurrency",
        str(concurrency),
        "--size",
        str(size),
        "--iterations",
        str(iterations),
    )
    output, usage, server_cpu = run_against(server, argv, timeout=900)
    runs = json.loads(output)["runs"]
    appends = sum(r["appends"] for r in runs)
    seconds = sum(r["seconds"] for r in runs)
    return Sample(
        values={"msgs": appends / seconds},
        generator=usage,
        server_cpu_s=server_cpu,
        notes={"appends": appends, "seconds": seconds},
    )


def run_client(server: ServerProcess, impl: Impl, options: Options) -> Sample:
    sample = client_appends(
        server, messages=1000, concurrency=75, size=100, iterations=2 if options.quick else 6
    )
    return Sample({"client_msgs": sample.values["msgs"]}, sample.generator, sample.server_cpu_s)


def parse_wrk(output: str) -> tuple[float, float, int]:
    """Requests/s, p99 latency in ms, and the count of failed responses from ``wrk --latency``."""
    rate = re.search(r"Requests/sec:\s+([\d.]+)", output)
    p99 = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s)\s*$", output, re.MULTILINE)
    if rate is None or p99 is None:
        raise RuntimeError(f"unexpected wrk output:\n{output}")
    failed = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    errors = re.search(r"Socket errors:.*", output)
    bad = int(failed.group(1)) if failed else 0
    if errors is not None:
        bad += sum(int(n) for n in re.findall(r"\d+", errors.group(0)))
    return float(rate.group(1)), float(p99.group(1)) * _UNITS[p99.group(2)], bad


def run_post(server: ServerProcess, impl: Impl, options: Options) -> Sample:
    """wrk, one thread, 50 keep-alive connections, POSTing 100 bytes to one stream."""
    url = f"{server.url}/v1/stream/wrk-post"
    headers = {"Content-Type": "application/octet-stream"}
    if server.token is not None:
        headers["Authorization"] = f"Bearer {server.token}"
    httpx.put(url, headers=headers).raise_for_status()
    seconds = 4 if options.quick else 10
    with tempfile.TemporaryDirectory(prefix="ds-bench-wrk-") as scratch:
        script = Path(scratch) / "post.lua"
        script.write_text(wrk_script(100, server.token))

        def wrk(duration: int) -> list[str]:
            return [
                "wrk",
                f"-t{WRK_THREADS}",
                f"-c{WRK_CONNECTIONS}",
                f"-d{duration}s",
                "--latency",
                "-s",
                str(script),
                url,
            ]

        # Warm-up (JIT, caches, connection set-up), not recorded.
        run_generator(wrk(1 if options.quick else 2), timeout=60)
        # Behind the gateway, Envoy's CPU too (it is not the server's).
        envoy_cpu = getattr(server, "envoy_cpu_seconds", None)
        envoy_before = envoy_cpu() if envoy_cpu else 0.0
        output, usage, server_cpu = run_against(server, wrk(seconds), timeout=seconds + 60)
        notes: dict[str, float | str] = {"seconds": seconds}
        if envoy_cpu:
            notes["envoy_cpu_s"] = envoy_cpu() - envoy_before
    rate, p99, bad = parse_wrk(output)
    if bad:
        raise RuntimeError(f"wrk saw {bad} failed requests:\n{output}")
    return Sample({"post_msgs": rate, "post_p99": p99}, usage, server_cpu, notes)


CLIENT = Scenario("client", "Official TS client throughput", CLIENT_METRICS, run_client)
POST = Scenario(
    "post", "Unbatched POST throughput (wrk)", POST_METRICS, run_post, through_gateway=True
)

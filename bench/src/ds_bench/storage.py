"""The storage benchmark: append latency/throughput per backend and writer count, and start-up."""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from ds_bench._postgres_store import backend_env
from ds_bench.appends import AppendFigures, measure_appends
from ds_bench.servers import DsServer
from ds_bench.startup import StartupFigures, measure_startup

BACKENDS = ("memory", "file-fast", "file-durable", "sqlite", "postgres")
WRITERS = (1, 16, 64)
PAYLOAD = b"x" * 100


def run_appends(
    backends: tuple[str, ...], seconds: float, quota_bytes: int = 0
) -> dict[str, list[AppendFigures]]:
    """``quota_bytes``: every bucket's quota (``DS_QUOTAS__MAX_BYTES``; 0 none): the
    writers of a backend share one bucket, so each append is checked and counted."""
    results: dict[str, list[AppendFigures]] = {}
    quota = {"DS_QUOTAS__MAX_BYTES": str(quota_bytes)}
    for mode in backends:
        with (
            tempfile.TemporaryDirectory(prefix=f"ds-bench-{mode}-") as data_dir,
            backend_env(mode) as env,
            DsServer(mode, Path(data_dir), {**env, **quota}) as server,
        ):
            results[mode] = [
                asyncio.run(measure_appends(server.url, writers, seconds, PAYLOAD, tag=mode))
                for writers in WRITERS
            ]
    return results


def run_startup(backends: tuple[str, ...], streams: int, total_bytes: int) -> list[StartupFigures]:
    figures = []
    for mode in backends:
        with (
            tempfile.TemporaryDirectory(prefix=f"ds-bench-startup-{mode}-") as data_dir,
            backend_env(mode) as env,
        ):
            figures.append(
                measure_startup(
                    mode, Path(data_dir), streams=streams, total_bytes=total_bytes, env=env
                )
            )
    return figures


def markdown(appends: dict[str, list[AppendFigures]], startup: list[StartupFigures]) -> str:
    lines = [
        "| backend | writers | appends/s | p50 ms | p99 ms |",
        "|---|---:|---:|---:|---:|",
    ]
    for mode, rows in appends.items():
        for row in rows:
            lines.append(
                f"| {mode} | {row.writers} | {row.per_second:,.0f} | "
                f"{row.p50_ms:.2f} | {row.p99_ms:.2f} |"
            )
    if startup:
        lines += [
            "",
            "| backend | streams | data | fill s | ready s | first read ms |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for start in startup:
            lines.append(
                f"| {start.mode} | {start.streams:,} | {start.total_bytes / 1024**3:.2f} GiB | "
                f"{start.fill_seconds:.1f} | {start.ready_seconds:.2f} | "
                f"{start.first_read_ms:.1f} |"
            )
    return "\n".join(lines) + "\n"


def write_results(
    out_dir: Path, appends: dict[str, list[AppendFigures]], startup: list[StartupFigures]
) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    payload = {
        "kind": "storage",
        "appends": {
            mode: [asdict(row) | {"per_second": row.per_second} for row in rows]
            for mode, rows in appends.items()
        },
        "startup": [asdict(row) for row in startup],
    }
    json_path = out_dir / f"storage-{stamp}.json"
    json_path.write_text(json.dumps(payload, indent=2))
    (out_dir / f"storage-{stamp}.md").write_text(markdown(appends, startup))
    return json_path

"""Start-up time of a durable backend holding many streams and much data."""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import aiohttp
import httpx

from ds_bench.servers import DsServer

if TYPE_CHECKING:
    from pathlib import Path


@dataclass(frozen=True, slots=True)
class StartupFigures:
    mode: str
    streams: int
    total_bytes: int
    fill_seconds: float
    ready_seconds: float
    first_read_ms: float


async def _fill(base_url: str, streams: int, bytes_per_stream: int, concurrency: int) -> None:
    body = random.randbytes(bytes_per_stream)
    semaphore = asyncio.Semaphore(concurrency)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def create(index: int) -> None:
            async with (
                semaphore,
                session.put(
                    f"{base_url}/v1/stream/startup/s{index:05d}",
                    data=body,
                    headers={"Content-Type": "application/octet-stream"},
                ) as response,
            ):
                if response.status != 201:
                    raise RuntimeError(f"create failed: {response.status}")

        await asyncio.gather(*(create(i) for i in range(streams)))


def measure_startup(
    mode: str,
    data_dir: Path,
    *,
    streams: int = 10_000,
    total_bytes: int = 1024**3,
    env: dict[str, str] | None = None,
) -> StartupFigures:
    """Fill a fresh store, restart the server on it, time readiness and a first read."""
    bytes_per_stream = total_bytes // streams
    with DsServer(mode, data_dir, env) as server:
        started = time.perf_counter()
        asyncio.run(_fill(server.url, streams, bytes_per_stream, concurrency=32))
        fill_seconds = time.perf_counter() - started
    with DsServer(mode, data_dir, env) as server:
        ready = server.ready_secs
        started = time.perf_counter()
        response = httpx.get(f"{server.url}/v1/stream/startup/s{streams // 2:05d}?offset=-1")
        first_read_ms = (time.perf_counter() - started) * 1000
        response.raise_for_status()
        if len(response.content) == 0:
            raise RuntimeError("restarted server returned no data")
    return StartupFigures(
        mode=mode,
        streams=streams,
        total_bytes=bytes_per_stream * streams,
        fill_seconds=fill_seconds,
        ready_seconds=ready,
        first_read_ms=first_read_ms,
    )

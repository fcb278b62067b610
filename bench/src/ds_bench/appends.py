"""Append latency and throughput with N concurrent writers (one stream each)."""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import aiohttp

if TYPE_CHECKING:
    from collections.abc import Sequence


@dataclass(frozen=True, slots=True)
class AppendFigures:
    writers: int
    appends: int
    seconds: float
    p50_ms: float
    p99_ms: float

    @property
    def per_second(self) -> float:
        return self.appends / self.seconds if self.seconds else 0.0


def percentile(values: list[float], fraction: float) -> float:
    """The value at ``fraction`` (0..1) of the sorted sample (nearest rank)."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))
    return ordered[index]


async def measure_appends(
    base_url: str | Sequence[str], writers: int, seconds: float, payload: bytes, *, tag: str
) -> AppendFigures:
    """Each writer appends ``payload`` to its own stream back to back for ``seconds``.

    Several base URLs (replicas of one store): writer i's stream is on the i-th, in turn.
    Every stream is in one bucket (``bench-{tag}``): with a bucket quota set, the
    writers share its running total.
    """
    bases = [base_url] if isinstance(base_url, str) else list(base_url)
    connector = aiohttp.TCPConnector(limit=writers + 4)
    async with aiohttp.ClientSession(connector=connector) as session:
        urls = [
            f"{bases[i % len(bases)]}/v1/stream/bench-{tag}/{writers}-{i}" for i in range(writers)
        ]
        for url in urls:
            async with session.put(url, headers={"Content-Type": "application/octet-stream"}) as r:
                r.raise_for_status()
        latencies: list[float] = []
        deadline = time.perf_counter() + seconds

        async def writer(url: str) -> None:
            while time.perf_counter() < deadline:
                started = time.perf_counter()
                async with session.post(
                    url, data=payload, headers={"Content-Type": "application/octet-stream"}
                ) as response:
                    if response.status not in (200, 204):
                        raise RuntimeError(f"append failed: {response.status}")
                latencies.append(time.perf_counter() - started)

        started = time.perf_counter()
        await asyncio.gather(*(writer(url) for url in urls))
        elapsed = time.perf_counter() - started
    return AppendFigures(
        writers=writers,
        appends=len(latencies),
        seconds=elapsed,
        p50_ms=statistics.median(latencies) * 1000,
        p99_ms=percentile(latencies, 0.99) * 1000,
    )

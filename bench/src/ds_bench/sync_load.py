"""Load for the sync benchmark: paced appends with their acknowledgement times, and backlogs."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import aiohttp
import msgspec

JSON = {"Content-Type": "application/json"}


@dataclass(frozen=True, slots=True)
class Acked:
    """One appended event: its id and the wall-clock time its append was acknowledged."""

    event_id: str
    acked_at: float


def event(event_id: str, n: int) -> dict[str, object]:
    """A session event of the reference shape, identified by ``value.id``."""
    return {
        "type": "message",
        "key": f"msg:{event_id}",
        "operation": "set",
        "value": {"id": event_id, "role": "user", "text": f"message {n}", "author": "user:bench"},
        "timestamp": "2026-11-26T10:00:00Z",
    }


async def paced(urls: list[str], rate: float, seconds: float, workers: int = 32) -> list[Acked]:
    """Append one event per request, ``rate`` a second round-robin over ``urls``, for ``seconds``.

    Each event has its send time on a fixed schedule, so a slow answer delays
    the events behind it only as far as the worker pool is busy, not the rate.
    """
    total = int(rate * seconds)
    acked: list[Acked] = []
    queue: asyncio.Queue[int] = asyncio.Queue()
    for n in range(total):
        queue.put_nowait(n)
    start = time.perf_counter() + 0.2
    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=workers, force_close=False)
    ) as session:

        async def work() -> None:
            while not queue.empty():
                n = queue.get_nowait()
                delay = start + n / rate - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                event_id = f"e{n}"
                body = msgspec.json.encode(event(event_id, n))
                async with session.post(urls[n % len(urls)], data=body, headers=JSON) as response:
                    await response.read()
                    if response.status not in (200, 204):
                        raise RuntimeError(f"append failed: HTTP {response.status}")
                acked.append(Acked(event_id, time.time()))

        await asyncio.gather(*(work() for _ in range(workers)))
    return acked


async def backlog(urls: list[str], per_stream: int, per_request: int = 1000) -> int:
    """Fill every stream with ``per_stream`` events, ``per_request`` per append; the total."""
    async with aiohttp.ClientSession() as session:

        async def fill(index: int, url: str) -> None:
            for first in range(0, per_stream, per_request):
                events = [
                    event(f"s{index}-{n}", n)
                    for n in range(first, min(per_stream, first + per_request))
                ]
                async with session.post(url, data=msgspec.json.encode(events), headers=JSON) as r:
                    await r.read()
                    if r.status not in (200, 204):
                        raise RuntimeError(f"append failed: HTTP {r.status}")

        for start in range(0, len(urls), 16):
            await asyncio.gather(
                *(fill(i, u) for i, u in enumerate(urls[start : start + 16], start))
            )
    return per_stream * len(urls)

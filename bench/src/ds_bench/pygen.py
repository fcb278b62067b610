"""Python load generators, one per child process (asyncio + aiohttp).

``python -m ds_bench.pygen KIND JSON`` runs one generator with the JSON
arguments and prints one JSON line: ``{"result": ..., "usage": ...}``. Running them out of the
orchestrator's process keeps their CPU time measurable on its own.
"""

from __future__ import annotations

import asyncio
import http.client
import inspect
import json
import resource
import sys
import time
from dataclasses import asdict
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import aiohttp

from ds_bench.appends import measure_appends

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

# No compression anywhere: the reference compresses when asked, ds-server never.
IDENTITY = {"Accept-Encoding": "identity"}
OCTETS = "application/octet-stream"


async def appends(base_url: str, writers: int, seconds: float, size: int, tag: str) -> object:
    """Each writer appends back to back to its own stream for ``seconds``."""
    figures = await measure_appends(base_url, writers, seconds, b"x" * size, tag=tag)
    return asdict(figures) | {"per_second": figures.per_second}


async def fill(url: str, total: int, chunk: int, concurrency: int) -> object:
    """Create ``url`` and append ``total`` bytes in ``chunk``-sized appends."""
    body = b"y" * chunk
    count = total // chunk
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as s:
        async with s.put(url, headers={"Content-Type": OCTETS}) as response:
            response.raise_for_status()
        # Sequential per worker so the stream's byte order is simply chunk after chunk.
        queue = iter(range(count))

        async def worker() -> None:
            for _ in queue:
                async with s.post(url, data=body, headers={"Content-Type": OCTETS}) as response:
                    response.raise_for_status()

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return {"bytes": count * chunk, "seconds": time.perf_counter() - started}


def catchup(url: str) -> object:
    """Read ``url`` from offset -1 until the server says up to date, following offsets.

    Blocking ``http.client`` reading into one reused buffer: several times
    cheaper per byte than an asyncio client, so the reader is never the limit.
    """
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port)
    buffer = memoryview(bytearray(4 * 1024 * 1024))
    total = requests = 0
    offset = "-1"
    started = time.perf_counter()
    while True:
        connection.request("GET", f"{parts.path}?offset={offset}", headers=IDENTITY)
        response = connection.getresponse()
        if response.status != 200:
            raise RuntimeError(f"catch-up read failed: {response.status}")
        requests += 1
        while read := response.readinto(buffer):
            total += read
        offset = response.getheader("Stream-Next-Offset") or ""
        if response.getheader("Stream-Up-To-Date") == "true":
            break
    seconds = time.perf_counter() - started
    connection.close()
    return {"bytes": total, "seconds": seconds, "requests": requests}


async def streams(base_url: str, count: int, size: int, concurrency: int, tag: str) -> object:
    """Create ``count`` streams, each holding one ``size``-byte message."""
    body = b"z" * size
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        queue = iter(range(count))

        async def worker() -> None:
            for index in queue:
                async with session.put(
                    f"{base_url}/v1/stream/{tag}/s{index:06d}",
                    data=body,
                    headers={"Content-Type": OCTETS},
                ) as response:
                    if response.status != 201:
                        raise RuntimeError(f"create failed: {response.status}")

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return {"streams": count, "seconds": time.perf_counter() - started}


KINDS: dict[str, Callable[..., Awaitable[object]] | Callable[..., object]] = {
    "appends": appends,
    "fill": fill,
    "catchup": catchup,
    "streams": streams,
}


async def _awaited(pending: Awaitable[object]) -> object:
    return await pending


def main(argv: list[str] | None = None) -> None:
    kind, raw = (argv if argv is not None else sys.argv[1:])[:2]
    arguments: dict[str, Any] = json.loads(raw)
    # The usage of the work itself, without the interpreter's start-up and imports.
    wall, cpu = time.perf_counter(), _cpu_seconds()
    result = KINDS[kind](**arguments)
    if inspect.isawaitable(result):
        result = asyncio.run(_awaited(result))
    usage = {"cpu_s": _cpu_seconds() - cpu, "wall_s": time.perf_counter() - wall}
    print(json.dumps({"result": result, "usage": usage}), flush=True)


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


if __name__ == "__main__":
    main()

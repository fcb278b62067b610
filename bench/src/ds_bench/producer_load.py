"""Messages/s through the SDK's ``AsyncIdempotentProducer``: the Python side of
``ds-bench producers``, run as ``python -m ds_bench.producer_load``.

The same shape as ``bench/node/producer-appends.mjs``: ``producers``
producers in one process (one event loop), each on a stream of its own,
each appending ``messages`` JSON messages of ``size`` bytes in bursts of
``burst`` (yielding to the loop between bursts), then ``flush()``. Prints
one JSON line: messages, seconds, the process's CPU seconds, errors.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import time
import uuid

import httpx
from durable_sessions import AsyncIdempotentProducer


def message(n: int, size: int) -> str:
    """``{"n":123,"pad":"xxx…"}`` padded to ``size`` bytes (pre-serialised JSON)."""
    head = f'{{"n":{n},"pad":"'
    return head + "x" * max(0, size - len(head) - 2) + '"}'


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def run(url: str, producers: int, messages: int, size: int, burst: int) -> dict[str, object]:
    names = [
        f"{url}/v1/stream/producers-py-{os.getpid()}-{i}-{uuid.uuid4().hex[:8]}"
        for i in range(producers)
    ]
    async with httpx.AsyncClient() as http:
        for name in names:
            response = await http.put(name, headers={"Content-Type": "application/json"})
            response.raise_for_status()
    errors: list[Exception] = []

    async def produce(i: int, stream: str) -> None:
        producer = AsyncIdempotentProducer(
            stream, f"bench-{i}", content_type="application/json", on_error=errors.append
        )
        for n in range(messages):
            producer.append(message(n, size))
            if n % burst == burst - 1:
                await asyncio.sleep(0)
        await producer.flush()
        await producer.detach()

    cpu0 = cpu_seconds()
    started = time.perf_counter()
    await asyncio.gather(*(produce(i, name) for i, name in enumerate(names)))
    seconds = time.perf_counter() - started
    cpu = cpu_seconds() - cpu0
    async with httpx.AsyncClient() as http:
        for name in names:
            await http.delete(name)
    return {
        "messages": producers * messages,
        "seconds": seconds,
        "cpu_s": cpu,
        "errors": len(errors),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--producers", type=int, default=1)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--burst", type=int, default=1000)
    parser.add_argument("--loop", choices=("asyncio", "uvloop"), default="uvloop")
    args = parser.parse_args()
    coroutine = run(args.url, args.producers, args.messages, args.size, args.burst)
    if args.loop == "uvloop":
        import uvloop

        result = uvloop.run(coroutine)
    else:
        result = asyncio.run(coroutine)
    print(json.dumps(result))


if __name__ == "__main__":
    main()

"""Tenant A of the fairness benchmark: appends as fast as it can, and more live reads than allowed.

``python -m ds_bench.flood --url URL --token TOKEN --stream PATH --writers N
--live-reads M --seconds S`` runs in a process of its own (so its work never
shares an interpreter with the measurements) and prints one JSON object:
what it sent and how each request was answered. Appends go out on
``--writers`` connections back to back, each the next as soon as the last
is answered; ``--live-reads`` SSE reads are opened at the start and held to
the end (those refused are counted, not retried).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import time
from dataclasses import asdict, dataclass, field

import aiohttp

# Envoy's 429 (the rate limit) and the server's (the live-read cap) say so in their bodies.
RATE_LIMITED = "subject"
LIVE_CAPPED = "too many live reads"


@dataclass
class FloodCounts:
    """How tenant A's requests were answered."""

    appends_sent: int = 0
    appends_accepted: int = 0
    appends_rate_limited: int = 0
    live_opened: int = 0
    live_refused_by_cap: int = 0
    live_rate_limited: int = 0
    other: dict[str, int] = field(default_factory=dict)
    errors: int = 0


async def _writer(
    session: aiohttp.ClientSession,
    url: str,
    until: float,
    counts: FloodCounts,
    other: collections.Counter[str],
) -> None:
    body = b'{"from": "tenant-a"}'
    while time.monotonic() < until:
        counts.appends_sent += 1
        try:
            async with session.post(url, data=body) as response:
                text = await response.text()
                if response.status == 204:
                    counts.appends_accepted += 1
                elif response.status == 429 and RATE_LIMITED in text:
                    counts.appends_rate_limited += 1
                else:
                    other[f"POST {response.status}"] += 1
        except aiohttp.ClientError:
            counts.errors += 1


async def _live_read(
    session: aiohttp.ClientSession,
    url: str,
    until: float,
    counts: FloodCounts,
    other: collections.Counter[str],
) -> None:
    try:
        async with session.get(url, params={"offset": "-1", "live": "sse"}) as response:
            if response.status == 200:
                counts.live_opened += 1
                # Hold it: read what comes until the end of the run.
                while time.monotonic() < until:
                    try:
                        await asyncio.wait_for(
                            response.content.readany(), timeout=max(0.01, until - time.monotonic())
                        )
                    except TimeoutError:
                        break
                return
            text = await response.text()
            if response.status == 429 and LIVE_CAPPED in text:
                counts.live_refused_by_cap += 1
            elif response.status == 429 and RATE_LIMITED in text:
                counts.live_rate_limited += 1
            else:
                other[f"GET {response.status}"] += 1
    except aiohttp.ClientError:
        counts.errors += 1


async def flood(
    url: str, token: str, stream: str, writers: int, live_reads: int, seconds: float
) -> FloodCounts:
    """Run tenant A for ``seconds``; how its requests were answered."""
    counts = FloodCounts()
    other: collections.Counter[str] = collections.Counter()
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    connector = aiohttp.TCPConnector(limit=writers + live_reads + 4)
    timeout = aiohttp.ClientTimeout(total=None, sock_read=seconds + 30)
    async with aiohttp.ClientSession(
        url, headers=headers, connector=connector, timeout=timeout
    ) as session:
        until = time.monotonic() + seconds
        tasks = [_live_read(session, stream, until, counts, other) for _ in range(live_reads)]
        tasks += [_writer(session, stream, until, counts, other) for _ in range(writers)]
        await asyncio.gather(*tasks)
    counts.other = dict(other)
    return counts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m ds_bench.flood", description=__doc__)
    parser.add_argument("--url", required=True, help="the gateway")
    parser.add_argument("--token", required=True)
    parser.add_argument("--stream", required=True, help="the stream's path, e.g. /ds/tenant-a/s")
    parser.add_argument("--writers", type=int, default=32)
    parser.add_argument("--live-reads", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args(argv)
    counts = asyncio.run(
        flood(args.url, args.token, args.stream, args.writers, args.live_reads, args.seconds)
    )
    print(json.dumps(asdict(counts)), flush=True)


if __name__ == "__main__":
    main()

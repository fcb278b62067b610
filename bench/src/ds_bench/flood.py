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


@dataclass
class _Run:
    """One run of tenant A: its session, its stream, when it ends and what it counted."""

    session: aiohttp.ClientSession
    stream: str
    until: float
    counts: FloodCounts = field(default_factory=FloodCounts)
    other: collections.Counter[str] = field(default_factory=collections.Counter)

    async def write(self) -> None:
        """Append back to back until the end, counting how each append was answered."""
        body = b'{"from": "tenant-a"}'
        while time.monotonic() < self.until:
            self.counts.appends_sent += 1
            try:
                async with self.session.post(self.stream, data=body) as response:
                    text = await response.text()
                    if response.status == 204:
                        self.counts.appends_accepted += 1
                    elif response.status == 429 and RATE_LIMITED in text:
                        self.counts.appends_rate_limited += 1
                    else:
                        self.other[f"POST {response.status}"] += 1
            except aiohttp.ClientError:
                self.counts.errors += 1

    async def hold_live_read(self) -> None:
        """Open an SSE read and hold it to the end; a refusal is counted, not retried."""
        params = {"offset": "-1", "live": "sse"}
        try:
            async with self.session.get(self.stream, params=params) as response:
                if response.status == 200:
                    self.counts.live_opened += 1
                    await self._hold(response)
                    return
                text = await response.text()
                if response.status == 429 and LIVE_CAPPED in text:
                    self.counts.live_refused_by_cap += 1
                elif response.status == 429 and RATE_LIMITED in text:
                    self.counts.live_rate_limited += 1
                else:
                    self.other[f"GET {response.status}"] += 1
        except aiohttp.ClientError:
            self.counts.errors += 1

    async def _hold(self, response: aiohttp.ClientResponse) -> None:
        # Read what comes until the end of the run.
        while time.monotonic() < self.until:
            try:
                await asyncio.wait_for(
                    response.content.readany(), timeout=max(0.01, self.until - time.monotonic())
                )
            except TimeoutError:
                break


async def flood(
    url: str, token: str, stream: str, writers: int, live_reads: int, seconds: float
) -> FloodCounts:
    """Run tenant A for ``seconds``; how its requests were answered."""
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    connector = aiohttp.TCPConnector(limit=writers + live_reads + 4)
    timeout = aiohttp.ClientTimeout(total=None, sock_read=seconds + 30)
    async with aiohttp.ClientSession(
        url, headers=headers, connector=connector, timeout=timeout
    ) as session:
        run = _Run(session, stream, until=time.monotonic() + seconds)
        tasks = [run.hold_live_read() for _ in range(live_reads)]
        tasks += [run.write() for _ in range(writers)]
        await asyncio.gather(*tasks)
    run.counts.other = dict(run.other)
    return run.counts


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

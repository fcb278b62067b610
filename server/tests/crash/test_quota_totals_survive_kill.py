"""Bucket totals after SIGKILL: what a bucket's quota counts is what its streams hold.

Writers fill a bucket to its quota and past it (refused), streams are made
and deleted, snapshots published, while the server is killed mid-flight and
restarted. Postgres keeps the totals in a table updated in each write's
transaction; sqlite's are counted from the streams when the store opens.
Afterwards the totals the bucket's metadata shows must equal what its
streams hold, read stream by stream, and never exceed the quota.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
from typing import TYPE_CHECKING
from urllib.parse import quote

import httpx
import pytest
from support.postgres import postgres_env
from support.server_process import ServerProcess

if TYPE_CHECKING:
    from pathlib import Path

BUCKET = "qcrash"
QUOTA_BYTES = 256 * 1024
QUOTA_STREAMS = 12
WRITERS = 4
KILLS = 3
OCTET = "application/octet-stream"


class Churn:
    """Writers racing for a bucket's last room while the server dies under them."""

    def __init__(self, server: ServerProcess, seed: int) -> None:
        self.server = server
        self.rng = random.Random(seed)
        self.stop = asyncio.Event()
        self.refused = 0  # 507s: the quota was met

    async def write(self, http: httpx.AsyncClient, index: int) -> None:
        rng = random.Random(self.rng.random())
        stream = f"/ds/{BUCKET}/w{index}"
        while not self.stop.is_set():
            with contextlib.suppress(httpx.HTTPError):
                body = bytes([index]) * rng.randint(512, 8192)
                response = await http.post(stream, content=body, headers={"Content-Type": OCTET})
                self.refused += response.status_code == 507
                if response.status_code in (200, 204) and rng.random() < 0.05:
                    # A snapshot at the tail frees the stream's bytes, keeps a blob.
                    tail = response.headers["Stream-Next-Offset"]
                    await http.put(f"{stream}/snapshot/{tail}", content=b"s" * rng.randint(1, 64))
            await asyncio.sleep(0)

    async def make_and_delete(self, http: httpx.AsyncClient) -> None:
        rng = random.Random(self.rng.random())
        serial = 0
        while not self.stop.is_set():
            serial += 1
            with contextlib.suppress(httpx.HTTPError):
                body = b"c" * rng.randint(0, 32 * 1024)
                stream = f"/ds/{BUCKET}/c{serial}"
                await http.put(stream, content=body, headers={"Content-Type": OCTET})
                await asyncio.sleep(rng.uniform(0, 0.05))
                if rng.random() < 0.7:
                    await http.delete(stream)
            await asyncio.sleep(0)

    async def run(self, http: httpx.AsyncClient) -> None:
        assert (await http.put(f"/ds/{BUCKET}")).status_code == 201
        for index in range(WRITERS):
            response = await http.put(f"/ds/{BUCKET}/w{index}", headers={"Content-Type": OCTET})
            assert response.status_code == 201
        tasks = [asyncio.create_task(self.write(http, i)) for i in range(WRITERS)]
        tasks.append(asyncio.create_task(self.make_and_delete(http)))
        try:
            for _ in range(KILLS):
                await asyncio.sleep(self.rng.uniform(0.8, 2.0))
                self.server.kill()
                await asyncio.to_thread(self.server.start)
            await asyncio.sleep(1.0)
        finally:
            self.stop.set()
            await asyncio.gather(*tasks)


async def held(http: httpx.AsyncClient) -> tuple[int, int]:
    """What the bucket's streams hold, read one by one: (bytes, streams)."""
    listing = (await http.get(f"/ds/{BUCKET}/streams")).json()
    size = 0
    for row in listing["streams"]:
        path = f"/ds/{BUCKET}/{quote(row['stream_id'], safe='')}"
        head = await http.head(path)
        tail = int(head.headers["Stream-Next-Offset"])
        snapshot = head.headers.get("Stream-Snapshot-Offset")
        if snapshot is None:
            size += tail
        else:
            blob = await http.get(f"{path}/snapshot/{snapshot}")
            size += tail - int(snapshot) + len(blob.content)
    return size, len(listing["streams"])


@pytest.mark.timeout(180)
@pytest.mark.parametrize("backend", ["postgres", "sqlite"])
async def test_bucket_totals_match_the_streams_after_sigkill(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    seed = int(os.environ.get("DS_CRASH_SEED") or random.randrange(2**32))
    env = {
        "DS_STORAGE__MODE": backend,
        "DS_STORAGE__DATA_DIR": str(tmp_path / "data"),
        "DS_QUOTAS__MAX_BYTES": str(QUOTA_BYTES),
        "DS_QUOTAS__MAX_STREAMS": str(QUOTA_STREAMS),
    }
    if backend == "postgres":
        env |= postgres_env(request.getfixturevalue("postgres"))
    server = ServerProcess(env=env)
    churn = Churn(server, seed)
    try:
        await asyncio.to_thread(server.start)
        async with httpx.AsyncClient(base_url=server.url, timeout=30.0) as http:
            await churn.run(http)
            usage = (await http.get(f"/ds/{BUCKET}")).json()["usage"]
            streams_hold = await held(http)
        # Once more from a clean restart: the totals a store opens with.
        server.stop()
        await asyncio.to_thread(server.start)
        async with httpx.AsyncClient(base_url=server.url, timeout=30.0) as http:
            reopened = (await http.get(f"/ds/{BUCKET}")).json()["usage"]
    finally:
        server.stop()
    assert churn.refused > 0, f"seed {seed}: the writers never met the quota"
    assert (usage["bytes"], usage["streams"]) == streams_hold, f"seed {seed}"
    assert reopened == usage, f"seed {seed}"
    assert usage["bytes"] <= QUOTA_BYTES
    assert usage["streams"] <= QUOTA_STREAMS

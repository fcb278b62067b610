"""Killing replicas under load loses and doubles nothing.

Three ds-server replicas share one Postgres store behind Envoy. Idempotent
producers append to a few streams (retrying a failed append with the same
sequence number, wherever Envoy sends the retry), SSE readers follow the
streams through Envoy and resume from their last offset when cut off, and a
replica is SIGKILLed and restarted every couple of seconds, ten times. Then
every acknowledged append is in its stream exactly once, in its producer's
order, nothing else is, and every reader saw exactly the stored stream.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import httpx
import pytest
from ds_stack.cluster import Cluster
from durable_sessions import follow
from durable_sessions.events import Update

if TYPE_CHECKING:
    from collections.abc import Iterator

STREAMS = 3
PRODUCERS_PER_STREAM = 2
KILLS = 10
KILL_EVERY_SECS = 1.5
DOWN_SECS = 0.5
TRANSIENT = (httpx.TransportError, httpx.HTTPStatusError)


@pytest.fixture
def cluster(postgres_db: str) -> Iterator[Cluster]:
    with Cluster(replicas=3, postgres_url=postgres_db) as running:
        yield running


@dataclass
class Tally:
    acked: dict[str, int] = field(default_factory=dict)  # producer -> last acknowledged seq
    retries: int = 0
    reader_errors: int = 0  # sessions that failed; follow() also resumes by itself


def _killer(cluster: Cluster, stop: threading.Event, kills: list[int]) -> None:
    chooser = random.Random(7)
    while len(kills) < KILLS and not stop.is_set():
        time.sleep(KILL_EVERY_SECS)
        victim = chooser.randrange(len(cluster.replicas))
        cluster.kill(victim)
        kills.append(victim)
        time.sleep(DOWN_SECS)
        cluster.restart(victim)


async def _produce(
    http: httpx.AsyncClient, url: str, producer: str, tally: Tally, stop: asyncio.Event
) -> None:
    seq = 0
    while not stop.is_set():
        body = json.dumps({"p": producer, "s": seq})
        headers = {
            "Content-Type": "application/json",
            "Producer-Id": producer,
            "Producer-Epoch": "0",
            "Producer-Seq": str(seq),
        }
        while True:  # the same seq until acknowledged: exactly-once is the server's job
            try:
                response = await http.post(url, content=body, headers=headers)
                if response.status_code >= 500:
                    response.raise_for_status()
                break
            except TRANSIENT:
                tally.retries += 1
                await asyncio.sleep(0.05)
        assert response.status_code in (200, 204), (response.status_code, response.text)
        tally.acked[producer] = seq
        seq += 1


async def _read(
    http: httpx.AsyncClient, url: str, headers: dict[str, str], tally: Tally
) -> list[bytes]:
    seen: list[bytes] = []
    position = "-1"
    while True:
        try:
            async for event in follow(
                url, offset=position, live="sse", client=http, headers=headers
            ):
                if isinstance(event, Update):
                    seen.extend(event.messages)
                    position = event.next_offset
                    if event.closed:
                        return seen
        except Exception:  # cut off with its replica: resume from the offset
            tally.reader_errors += 1
            await asyncio.sleep(0.1)


async def _stored(http: httpx.AsyncClient, url: str) -> list[bytes]:
    messages: list[bytes] = []
    offset = "-1"
    while True:
        response = await http.get(url, params={"offset": offset})
        response.raise_for_status()
        messages.extend(json.dumps(item).encode() for item in response.json())
        offset = response.headers["Stream-Next-Offset"]
        if response.headers.get("Stream-Up-To-Date") == "true" or not response.json():
            return messages


def _normal(messages: list[bytes]) -> list[tuple[str, int]]:
    return [(m["p"], m["s"]) for m in (json.loads(raw) for raw in messages)]


async def _scenario(cluster: Cluster) -> tuple[Tally, dict[str, list[bytes]], list[list[bytes]]]:
    auth = {"Authorization": f"Bearer {cluster.token}"}
    tally = Tally()
    urls = [f"{cluster.url}/v1/stream/killtest/s{i}" for i in range(STREAMS)]
    timeout = httpx.Timeout(10.0, read=60.0)
    async with httpx.AsyncClient(headers=auth, timeout=timeout) as http:
        for url in urls:
            created = await http.put(url, headers={"Content-Type": "application/json"})
            assert created.status_code == 201, created.text
        stop_producers = asyncio.Event()
        readers = [asyncio.create_task(_read(http, url, auth, tally)) for url in urls]
        producers = [
            asyncio.create_task(_produce(http, url, f"s{i}-p{j}", tally, stop_producers))
            for i, url in enumerate(urls)
            for j in range(PRODUCERS_PER_STREAM)
        ]
        kills: list[int] = []
        stop_killer = threading.Event()
        killer = asyncio.create_task(asyncio.to_thread(_killer, cluster, stop_killer, kills))
        try:
            await killer
        finally:
            stop_killer.set()
            stop_producers.set()
            await asyncio.gather(*producers)
        assert len(kills) == KILLS
        for url in urls:
            closing = await http.post(url, headers={"Stream-Closed": "true"})
            assert closing.status_code in (200, 204), closing.text
        seen = await asyncio.wait_for(asyncio.gather(*readers), timeout=120)
        stored = {url: await _stored(http, url) for url in urls}
    return tally, stored, list(seen)


def test_replica_kills_lose_and_double_nothing(cluster: Cluster) -> None:
    tally, stored, seen = asyncio.run(_scenario(cluster))

    lost = doubled = 0
    for i, url in enumerate(stored):
        entries = _normal(stored[url])
        for j in range(PRODUCERS_PER_STREAM):
            producer = f"s{i}-p{j}"
            seqs = [s for p, s in entries if p == producer]
            expected = list(range(tally.acked.get(producer, -1) + 1))
            lost += len(set(expected) - set(seqs))
            doubled += len(seqs) - len(set(seqs))
            # In its producer's order, and nothing that was never acknowledged.
            assert seqs == sorted(set(seqs)), producer
            assert set(seqs) <= set(expected), producer
    assert (lost, doubled) == (0, 0)
    # Every reader ends with the full stream, in order, across its reconnects.
    for url, messages in zip(stored, seen, strict=True):
        assert _normal(messages) == _normal(stored[url])
    assert sum(tally.acked.values()) > 0
    print(
        f"acknowledged appends: {sum(v + 1 for v in tally.acked.values())}, "
        f"producer retries: {tally.retries}, reader errors: {tally.reader_errors}"
    )

"""Crash safety of the durable backends: real processes, real SIGKILL, mid-flight.

Idempotent producers append concurrently to several streams while the
server is killed at chosen moments and restarted on the same data
directory; producers retry whatever was not acknowledged. Afterwards every
acknowledged append must be in its stream exactly once, byte-exact, at the
offset it was acknowledged at, and closure, TTL, producer state and forks
must have survived. ``DS_CRASH_SEED`` replays a run's payloads and timings.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx
import pytest
from crash_checks import ReadFailed, Verdict, judge, parse, read_stream
from crash_payloads import LARGE, Garbage
from crash_producers import EPOCH, OCTET, Producer
from support.postgres import postgres_env
from support.server_process import ServerProcess

if TYPE_CHECKING:
    from pathlib import Path

PREFIX = "/v1/stream"
BYTE_STREAMS = ("b0", "b1", "b2", "b3", "b4", "b5")
PRODUCERS_PER_STREAM = 2
TTL_STREAM = "b0"
FORK_SOURCE = "b1"
TTL_SECS = "3600"
CLOSER_APPENDS = 12
# When each kill strikes, counted from the (re)start before it.
KILL_PLAN = (
    "mid-burst",
    "large-append",
    "after-start",
    "mid-burst",
    "large-append",
    "after-start",
)
WARM_UP_SECS = 1.0
FINAL_RUN_SECS = 2.5


@dataclass(frozen=True, slots=True)
class Kill:
    kind: str
    in_flight: int
    large_in_flight: bool


class Workload:
    """The streams, producers and kill schedule of one backend's run."""

    def __init__(self, backend: str, server: ServerProcess, seed: int) -> None:
        self.backend = backend
        self.server = server
        self.seed = seed
        self.rng = random.Random(seed)
        self.paths = {
            name: f"{PREFIX}/crash-{name}" for name in (*BYTE_STREAMS, "fork", "closing", "json")
        }
        self.producers = [
            Producer(f"{stream}-p{index}", self.paths[stream], seed)
            for stream in BYTE_STREAMS
            for index in range(PRODUCERS_PER_STREAM)
        ]
        self.producers.append(Producer("json-p0", self.paths["json"], seed, json=True))
        self.producers.append(Producer("json-p1", self.paths["json"], seed, json=True))
        self.closer = Producer("closer", self.paths["closing"], seed, close_at=CLOSER_APPENDS)
        self.producers.append(self.closer)
        self.fork_producers = [Producer(f"fork-p{i}", self.paths["fork"], seed) for i in range(2)]
        self.fork_offset = 0
        self.kills: list[Kill] = []
        self.problems: list[str] = []
        self.stop = asyncio.Event()
        self.large = asyncio.Event()

    @property
    def everyone(self) -> list[Producer]:
        return [*self.producers, *self.fork_producers]

    def producers_of(self, stream: str) -> list[Producer]:
        return [p for p in self.everyone if p.stream == self.paths[stream]]

    async def create_streams(self, http: httpx.AsyncClient) -> None:
        for name in (*BYTE_STREAMS, "closing"):
            headers = {"Content-Type": OCTET}
            if name == TTL_STREAM:
                headers["Stream-TTL"] = TTL_SECS
            response = await http.put(self.paths[name], headers=headers)
            assert response.status_code == 201, response.text
        response = await http.put(self.paths["json"], headers={"Content-Type": "application/json"})
        assert response.status_code == 201, response.text

    async def create_fork(self, http: httpx.AsyncClient) -> None:
        source = self.paths[FORK_SOURCE]
        response = await http.put(self.paths["fork"], headers={"Stream-Forked-From": source})
        assert response.status_code == 201, response.text
        self.fork_offset = int(response.headers["Stream-Next-Offset"])

    async def kill_at(self, kind: str) -> None:
        """Wait for the kill point ``kind``, then SIGKILL and restart the server."""
        if kind == "after-start":
            await asyncio.sleep(self.rng.uniform(0.005, 0.05))
        elif kind == "mid-burst":
            await asyncio.sleep(self.rng.uniform(1.0, 2.5))
        else:
            await asyncio.sleep(0.3)
            self.large.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.large.wait(), 10)
            await asyncio.sleep(self.rng.uniform(0, 0.004))
        sizes = [p.in_flight for p in self.everyone if p.in_flight]
        self.server.kill()
        self.kills.append(Kill(kind, len(sizes), any(size >= LARGE for size in sizes)))
        await asyncio.to_thread(self.server.start)

    async def check_survivors(self, http: httpx.AsyncClient, when: str) -> None:
        """Closure, TTL and the fork's inherited prefix, as they must be after any restart."""
        head = await http.head(self.paths[TTL_STREAM])
        if head.headers.get("Stream-TTL") != TTL_SECS:
            ttl = head.headers.get("Stream-TTL")
            self.problems.append(f"{when}: TTL stream HEAD {head.status_code}, Stream-TTL {ttl}")
        head = await http.head(self.paths["closing"])
        if head.headers.get("Stream-Closed") != "true":
            self.problems.append(f"{when}: closed stream HEAD {head.status_code} says it is open")
        append = await http.post(
            self.paths["closing"], content=b"x", headers={"Content-Type": OCTET}
        )
        if append.status_code != 409 or append.headers.get("Stream-Closed") != "true":
            self.problems.append(f"{when}: append to closed stream got {append.status_code}")
        try:
            source = await read_stream(http, self.paths[FORK_SOURCE], json=False)
            fork = await read_stream(http, self.paths["fork"], json=False)
        except ReadFailed as exc:
            self.problems.append(f"{when}: {exc}")
            return
        if fork.data[: self.fork_offset] != source.data[: self.fork_offset]:
            self.problems.append(f"{when}: fork no longer starts with its source's first bytes")

    async def verify(self, http: httpx.AsyncClient) -> Verdict:
        """Read every stream completely and judge it against the acknowledgements."""
        verdict = Verdict()
        for name in (*BYTE_STREAMS, "closing", "json", "fork"):
            json = name == "json"
            base = self.fork_offset if name == "fork" else 0
            try:
                content = await read_stream(http, self.paths[name], json=json)
                records = parse(self.seed, name, content, json=json, base=base)
            except ReadFailed as exc:
                verdict.problems.append(str(exc))
                records = []
            except Garbage as exc:
                # What follows the garbage cannot be found: judged as lost.
                verdict.problems.append(str(exc))
                records = exc.records
            judge(name, records, self.producers_of(name), verdict)
        return verdict

    async def check_producer_state(self, http: httpx.AsyncClient) -> None:
        """Acknowledged seqs are duplicates, a stale epoch is fenced, the next seq is accepted."""
        for producer in self.everyone:
            if not producer.acks:
                self.problems.append(f"{producer.name}: no append was acknowledged")
                continue
            last = max(producer.acks)
            again = await http.post(
                producer.stream, content=producer.body(last), headers=producer.headers(last)
            )
            if again.status_code != 204 or again.headers.get("Producer-Seq") != str(last):
                self.problems.append(f"{producer.name}#{last} resent: {again.status_code}")
            stale = await http.post(
                producer.stream,
                content=producer.body(last + 1),
                headers=producer.headers(last + 1, epoch=EPOCH - 1),
            )
            if stale.status_code != 403 or stale.headers.get("Producer-Epoch") != str(EPOCH):
                self.problems.append(f"{producer.name} stale epoch: {stale.status_code}")
            head = await http.head(producer.stream)
            if head.status_code != 200:
                self.problems.append(f"{producer.name}: HEAD {head.status_code}")
                continue
            tail = int(head.headers["Stream-Next-Offset"])
            following = await http.post(
                producer.stream, content=producer.body(last + 1), headers=producer.headers(last + 1)
            )
            if producer is self.closer:
                if following.status_code != 409 or following.headers.get("Stream-Closed") != "true":
                    self.problems.append(f"closer after close: {following.status_code}")
                continue
            expected = tail + producer.stored_size(last + 1)
            if (
                following.status_code != 200
                or following.headers.get("Stream-Next-Offset") != f"{expected:020d}"
            ):
                self.problems.append(
                    f"{producer.name}#{last + 1}: {following.status_code} "
                    f"{following.headers.get('Stream-Next-Offset')} (expected 200 at {expected})"
                )

    async def run(self) -> Verdict:
        limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
        timeout = httpx.Timeout(15.0)
        async with httpx.AsyncClient(
            base_url=self.server.url, limits=limits, timeout=timeout
        ) as http:
            await self.create_streams(http)
            tasks = [asyncio.create_task(self._drive(http, p)) for p in self.producers]
            try:
                await self._crash_repeatedly(http, tasks)
            finally:
                for task in tasks:
                    task.cancel()
            for producer in self.everyone:
                self.problems.extend(producer.errors)
            verdict = await self.verify(http)
            await self.check_survivors(http, "at the end")
            await self.check_producer_state(http)
        verdict.problems[:0] = self.problems
        return verdict

    async def _crash_repeatedly(
        self, http: httpx.AsyncClient, tasks: list[asyncio.Task[None]]
    ) -> None:
        await asyncio.sleep(WARM_UP_SECS)
        await self.create_fork(http)
        tasks += [asyncio.create_task(self._drive(http, p)) for p in self.fork_producers]
        closer = tasks[self.producers.index(self.closer)]
        await asyncio.wait_for(asyncio.shield(closer), 30)
        for index, kind in enumerate(KILL_PLAN, start=1):
            await self.kill_at(kind)
            upcoming = KILL_PLAN[index] if index < len(KILL_PLAN) else None
            # Checking takes a while on a busy machine; the next kill must come at once.
            if upcoming != "after-start":
                await self.check_survivors(http, f"after kill {index} ({kind})")
        await asyncio.sleep(FINAL_RUN_SECS)
        self.stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), 120)

    async def _drive(self, http: httpx.AsyncClient, producer: Producer) -> None:
        await producer.run(http, self.stop, self.large.set)

    def summary(self, verdict: Verdict, elapsed: float) -> str:
        acks = [ack for p in self.everyone for ack in p.acks.values()]
        retried = sum(ack.attempts > 1 for ack in acks)
        duplicates = sum(ack.status == 204 for ack in acks)
        kills = ", ".join(
            f"{k.kind} ({k.in_flight} in flight{', one of 64 KiB' if k.large_in_flight else ''})"
            for k in self.kills
        )
        return (
            f"crash-safety {self.backend}: {len(self.kills)} kills, {len(acks)} appends "
            f"acknowledged ({retried} retried after a kill, {duplicates} were duplicates), "
            f"{verdict.lost} lost, {verdict.duplicated} duplicated, {verdict.misplaced} misplaced"
            f" in {elapsed:.1f}s; kills: {kills}"
        )


@pytest.mark.timeout(240)
@pytest.mark.parametrize(
    "backend", ["file-durable", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
async def test_acknowledged_appends_survive_sigkill(
    backend: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    seed = int(os.environ.get("DS_CRASH_SEED") or random.randrange(2**32))
    env = {
        "DS_STORAGE__MODE": backend,
        "DS_STORAGE__DATA_DIR": str(tmp_path / "data"),
        "DS_LIMITS__MAX_STREAM_BYTES": str(256 * 1024 * 1024),
        "DS_LIMITS__MAX_MEMORY_BYTES": str(1024 * 1024 * 1024),
    }
    if backend == "postgres":
        # The server process is killed; the database, like a real one, lives on.
        env |= postgres_env(request.getfixturevalue("postgres"))
    server = ServerProcess(env=env)
    with capsys.disabled():
        print(f"\ncrash-safety {backend}: seed {seed} (DS_CRASH_SEED={seed} replays it)")
    workload = Workload(backend, server, seed)
    started = time.monotonic()
    try:
        await asyncio.to_thread(server.start)
        verdict = await workload.run()
    finally:
        server.stop()
    with capsys.disabled():
        print(workload.summary(verdict, time.monotonic() - started))
    assert len(workload.kills) == len(KILL_PLAN)
    if verdict.problems:
        shown = "\n".join(verdict.problems[:40])
        pytest.fail(
            f"{len(verdict.problems)} problem(s) after the crashes:\n{shown}", pytrace=False
        )

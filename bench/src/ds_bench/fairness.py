"""``ds-bench fairness``: one tenant floods the gateway; another's latency, with and without it.

A real Envoy (the committed dev config with the run's limits per subject)
in front of a real ds-server in gateway mode (the run's cap on live reads
per subject). Two tenants, each a token subject with a bucket of its own:

- **B**, a normal session app: appends at a steady rate (``b_rate`` a
  second, one at a time) and follows its stream over SSE. Measured: each
  append's latency, and each message's delivery latency (sent to received
  over SSE).
- **A**, the flood (``ds_bench.flood``, a process of its own): appends on
  ``a_writers`` connections as fast as answers come back, and opens
  ``live_cap + a_extra_live`` SSE reads at once.

Phase one, A idle; phase two, A flooding; the same processes throughout,
one run. The verdict: A's excess is refused (its appends past its rate by
Envoy, its live reads past the cap by ds-server), none of B's requests is
refused, B's stream holds exactly what B wrote and B's SSE read got all of
it in order, and A's stream holds exactly A's accepted appends. Latencies
are reported, never judged: the run shares the machine's cores with Envoy,
the server, A's generator and whatever else runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp
from ds_proxy.tokens import bucket_token

from ds_bench import _machine
from ds_bench.flood import FloodCounts
from ds_bench.gateway import Gateway
from ds_bench.servers import DsServer

if TYPE_CHECKING:
    import argparse

A_BUCKET = "tenant-a"
B_BUCKET = "tenant-b"
JSON_TYPE = "application/json"


@dataclass(frozen=True, slots=True)
class Limits:
    """The run's limits, the same for every subject (A meets them, B must not)."""

    appends_per_sec: int = 100
    append_burst: int = 200
    reads_per_sec: int = 100
    read_burst: int = 200
    live_cap: int = 20

    def gateway_env(self) -> dict[str, str]:
        return {
            "DS_PROXY__APPENDS_PER_SEC": str(self.appends_per_sec),
            "DS_PROXY__APPEND_BURST": str(self.append_burst),
            "DS_PROXY__READS_PER_SEC": str(self.reads_per_sec),
            "DS_PROXY__READ_BURST": str(self.read_burst),
        }

    def server_env(self) -> dict[str, str]:
        return {"DS_AUTH__MODE": "gateway", "DS_AUTH__MAX_LIVE_READS_PER_SUB": str(self.live_cap)}


@dataclass(frozen=True, slots=True)
class Plan:
    phase_secs: float = 15.0
    b_rate: float = 20.0
    a_writers: int = 32
    a_extra_live: int = 10
    backend: str = "sqlite"
    limits: Limits = field(default_factory=Limits)
    # False: the same run with every limit lifted, for comparison (nothing of A is refused).
    limited: bool = True

    def gateway_env(self) -> dict[str, str]:
        if not self.limited:
            return {"DS_PROXY__APPENDS_PER_SEC": "0", "DS_PROXY__READS_PER_SEC": "0"}
        return self.limits.gateway_env()

    def server_env(self) -> dict[str, str]:
        env = self.limits.server_env()
        if not self.limited:
            env["DS_AUTH__MAX_LIVE_READS_PER_SUB"] = "0"
        return env


@dataclass
class Figures:
    """B's latencies in one phase, in milliseconds."""

    appends: int
    append_p50_ms: float
    append_p99_ms: float
    deliveries: int
    delivery_p50_ms: float
    delivery_p99_ms: float


@dataclass
class Phase:
    name: str
    b: Figures
    a: FloodCounts | None


@dataclass
class Verdict:
    """What must hold whatever the timings."""

    b_refused: dict[str, int]
    b_errors: int
    b_stored_exactly: bool
    b_delivered_exactly: bool
    a_stored_exactly: bool
    a_excess_refused: bool

    @property
    def passed(self) -> bool:
        return (
            not self.b_refused
            and self.b_errors == 0
            and self.b_stored_exactly
            and self.b_delivered_exactly
            and self.a_stored_exactly
            and self.a_excess_refused
        )


@dataclass
class FairnessResult:
    plan: Plan
    phases: list[Phase]
    verdict: Verdict
    background_share: float


def _percentile(values: list[float], share: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


class TenantB:
    """B's writer and SSE reader; samples are kept per phase by the message's number."""

    def __init__(self, session: aiohttp.ClientSession, stream: str) -> None:
        self.session = session
        self.stream = stream
        self.sent = 0  # messages acknowledged, numbered 0..sent-1
        self.append_ms: dict[int, float] = {}
        self.delivery_ms: dict[int, float] = {}
        self.received: list[int] = []
        self.refused: dict[str, int] = {}
        self.errors = 0
        self.reading = True
        self.progress = asyncio.Event()  # set whenever the reader has confirmed more

    async def write_for(self, seconds: float, rate: float) -> range:
        """Append at ``rate`` a second for ``seconds``; the numbers of the messages sent."""
        first = self.sent
        interval = 1.0 / rate
        start = time.monotonic()
        while (now := time.monotonic()) - start < seconds:
            body = json.dumps({"i": self.sent, "t": time.time()})
            began = time.perf_counter()
            try:
                async with self.session.post(self.stream, data=body) as response:
                    await response.read()
                    if response.status == 204:
                        self.append_ms[self.sent] = (time.perf_counter() - began) * 1000
                        self.sent += 1
                    else:
                        key = str(response.status)
                        self.refused[key] = self.refused.get(key, 0) + 1
            except aiohttp.ClientError:
                self.errors += 1
            await asyncio.sleep(max(0.0, interval - (time.monotonic() - now)))
        return range(first, self.sent)

    async def read(self) -> None:
        """Follow the stream over SSE from the start, resuming from the last offset."""
        offset = "-1"
        while self.reading:
            params = {"offset": offset, "live": "sse"}
            try:
                async with self.session.get(self.stream, params=params) as response:
                    if response.status != 200:
                        key = f"SSE {response.status}"
                        self.refused[key] = self.refused.get(key, 0) + 1
                        await asyncio.sleep(0.2)
                        continue
                    offset = await self._events(response, offset)
            except aiohttp.ClientError:
                self.errors += 1
                await asyncio.sleep(0.2)

    async def _events(self, response: aiohttp.ClientResponse, offset: str) -> str:
        event, pending = "", []
        async for raw in response.content:
            line = raw.decode("utf-8").rstrip("\r\n")
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:") and event == "data":
                pending.extend(json.loads(line[5:].strip()))
            elif line.startswith("data:") and event == "control":
                now = time.time()
                for item in pending:
                    self.received.append(item["i"])
                    self.delivery_ms[item["i"]] = (now - item["t"]) * 1000
                pending = []
                offset = json.loads(line[5:].strip())["streamNextOffset"]
                self.progress.set()
            if not self.reading:
                break
        return offset

    async def caught_up(self) -> None:
        """Until the reader has received every acknowledged message."""
        while len(self.received) < self.sent:
            self.progress.clear()
            await self.progress.wait()

    def figures(self, numbers: range) -> Figures:
        appends = [self.append_ms[n] for n in numbers if n in self.append_ms]
        deliveries = [self.delivery_ms[n] for n in numbers if n in self.delivery_ms]
        return Figures(
            appends=len(appends),
            append_p50_ms=statistics.median(appends) if appends else 0.0,
            append_p99_ms=_percentile(appends, 0.99),
            deliveries=len(deliveries),
            delivery_p50_ms=statistics.median(deliveries) if deliveries else 0.0,
            delivery_p99_ms=_percentile(deliveries, 0.99),
        )


def _start_flood(gateway: Gateway, plan: Plan, token: str, stream: str) -> subprocess.Popen[str]:
    live = plan.limits.live_cap + plan.a_extra_live
    return subprocess.Popen(
        [
            sys.executable, "-m", "ds_bench.flood",
            "--url", gateway.url, "--token", token, "--stream", stream,
            "--writers", str(plan.a_writers), "--live-reads", str(live),
            "--seconds", str(plan.phase_secs),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip


def _flood_counts(flood: subprocess.Popen[str], timeout: float) -> FloodCounts:
    out, _ = flood.communicate(timeout=timeout)
    if flood.returncode != 0:
        raise RuntimeError(f"tenant A's flood failed ({flood.returncode})")
    return FloodCounts(**json.loads(out))


async def _stored(session: aiohttp.ClientSession, stream: str) -> list[Any]:
    """Every message of a JSON stream, read page by page."""
    messages: list[Any] = []
    offset = "-1"
    while True:
        async with session.get(stream, params={"offset": offset}) as response:
            response.raise_for_status()
            messages.extend(json.loads(await response.read()))
            offset = response.headers["Stream-Next-Offset"]
            if response.headers.get("Stream-Up-To-Date") == "true":
                return messages


async def _run_tenants(gateway: Gateway, plan: Plan) -> tuple[list[Phase], Verdict]:
    tokens = {
        bucket: bucket_token(bucket, read=(bucket,), write=(bucket,))
        for bucket in (A_BUCKET, B_BUCKET)
    }
    streams = {bucket: f"/ds/{bucket}/room" for bucket in tokens}

    def client(bucket: str) -> aiohttp.ClientSession:
        headers = {"Authorization": f"Bearer {tokens[bucket]}", "Content-Type": JSON_TYPE}
        # No overall deadline: the SSE read lasts the whole run.
        timeout = aiohttp.ClientTimeout(total=None, sock_read=120)
        return aiohttp.ClientSession(gateway.url, headers=headers, timeout=timeout)

    async with client(A_BUCKET) as a_session, client(B_BUCKET) as b_session:
        for bucket, session in ((A_BUCKET, a_session), (B_BUCKET, b_session)):
            async with session.put(f"/ds/{bucket}") as created:
                assert created.status == 201, await created.text()
            async with session.put(streams[bucket]) as created:
                assert created.status == 201, await created.text()
        b = TenantB(b_session, streams[B_BUCKET])
        reader = asyncio.ensure_future(b.read())
        idle = await b.write_for(plan.phase_secs, plan.b_rate)
        flood = _start_flood(gateway, plan, tokens[A_BUCKET], streams[A_BUCKET])
        try:
            flooding = await b.write_for(plan.phase_secs, plan.b_rate)
            counts = await asyncio.to_thread(_flood_counts, flood, plan.phase_secs + 120)
        finally:
            if flood.poll() is None:
                flood.kill()
                flood.wait()
        # Let B's reader catch up with the tail (a verdict, not a wait, if it never does).
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(30):
                await b.caught_up()
        b.reading = False
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader
        b_stored = [item["i"] for item in await _stored(b_session, streams[B_BUCKET])]
        a_stored = await _stored(a_session, streams[A_BUCKET])
    phases = [
        Phase("A idle", b.figures(idle), None),
        Phase("A flooding", b.figures(flooding), counts),
    ]
    expected = list(range(b.sent))
    verdict = Verdict(
        b_refused=b.refused,
        b_errors=b.errors,
        b_stored_exactly=b_stored == expected,
        b_delivered_exactly=b.received == expected,
        a_stored_exactly=len(a_stored) == counts.appends_accepted,
        a_excess_refused=(
            counts.appends_rate_limited > 0
            and counts.live_refused_by_cap == plan.a_extra_live
            and counts.live_opened == plan.limits.live_cap
        )
        if plan.limited
        # Lifted limits: everything A sends is served.
        else counts.appends_rate_limited == counts.live_refused_by_cap == 0,
    )
    return phases, verdict


def run(plan: Plan) -> FairnessResult:
    """One run: B alone, then B beside A's flood, through one gateway and one server."""
    before = _machine.snapshot()
    with tempfile.TemporaryDirectory(prefix="ds-bench-fairness-") as data:
        server = DsServer(plan.backend, Path(data), plan.server_env())
        with server, Gateway(server.port, limits=plan.gateway_env()) as gateway:
            phases, verdict = asyncio.run(_run_tenants(gateway, plan))
    share = _machine.background_share(before, _machine.snapshot())
    return FairnessResult(plan, phases, verdict, share)


def markdown(result: FairnessResult) -> str:
    """The result as the tables docs/benchmarks.md shows."""
    plan, limits = result.plan, result.plan.limits
    described = (
        f"Limits per subject: appends {limits.appends_per_sec}/s (burst {limits.append_burst}), "
        f"reads {limits.reads_per_sec}/s (burst {limits.read_burst}), live reads "
        f"{limits.live_cap}."
        if plan.limited
        else "**No limits** (lifted for comparison)."
    )
    lines = [
        f"{described} B appends {plan.b_rate:g}/s; A floods on {plan.a_writers} "
        f"connections and opens {limits.live_cap + plan.a_extra_live} live reads; "
        f"{plan.phase_secs:g} s per phase, {plan.backend} store. Other processes used "
        f"{result.background_share:.0%} of the machine meanwhile.",
        "",
        "| phase | B appends | B append p50 | B append p99 | B SSE deliveries | "
        "B delivery p50 | B delivery p99 |",
        "|---|---|---|---|---|---|---|",
    ]
    for phase in result.phases:
        b = phase.b
        lines.append(
            f"| {phase.name} | {b.appends} | {b.append_p50_ms:.1f} ms | {b.append_p99_ms:.1f} ms "
            f"| {b.deliveries} | {b.delivery_p50_ms:.1f} ms | {b.delivery_p99_ms:.1f} ms |"
        )
    flood = result.phases[-1].a
    assert flood is not None
    verdict = result.verdict
    lines += [
        "",
        "| tenant A (flooding) | count |",
        "|---|---|",
        f"| appends sent | {flood.appends_sent:,} |",
        f"| appends accepted | {flood.appends_accepted:,} |",
        f"| appends refused by Envoy (429) | {flood.appends_rate_limited:,} |",
        f"| live reads opened | {flood.live_opened} |",
        f"| live reads refused by ds-server (429) | {flood.live_refused_by_cap} |",
        f"| other answers, errors | {flood.other or 0}, {flood.errors} |",
        "",
        f"B refused: {verdict.b_refused or 'none'}; B's stream exactly as written: "
        f"{_yes(verdict.b_stored_exactly)}; B's SSE read got all of it in order: "
        f"{_yes(verdict.b_delivered_exactly)}; A's stream holds exactly its accepted appends: "
        f"{_yes(verdict.a_stored_exactly)}.",
    ]
    return "\n".join(lines) + "\n"


def _yes(value: bool) -> str:
    return "yes" if value else "**no**"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("fairness", help="tenant B's latency with tenant A idle, then flooding")
    parser.add_argument("--seconds", type=float, default=15.0, help="per phase")
    parser.add_argument("--b-rate", type=float, default=20.0, help="B's appends per second")
    parser.add_argument("--writers", type=int, default=32, help="A's flooding connections")
    parser.add_argument("--backend", default="sqlite", help="ds-server's store (its default)")
    parser.add_argument("--appends-per-sec", type=int, default=100)
    parser.add_argument("--live-cap", type=int, default=20)
    parser.add_argument(
        "--no-limits", action="store_true", help="lift every limit: the same run, for comparison"
    )


def main(args: argparse.Namespace, results: Path) -> None:
    plan = Plan(
        phase_secs=args.seconds,
        b_rate=args.b_rate,
        a_writers=args.writers,
        backend=args.backend,
        limits=Limits(
            appends_per_sec=args.appends_per_sec,
            append_burst=2 * args.appends_per_sec,
            live_cap=args.live_cap,
        ),
        limited=not args.no_limits,
    )
    result = run(plan)
    text = markdown(result)
    print(text)
    results.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    name = f"fairness-{stamp}" + ("" if plan.limited else "-no-limits")
    (results / f"{name}.json").write_text(json.dumps(asdict(result), indent=2))
    (results / f"{name}.md").write_text(text)
    print(f"results: {results / f'{name}.md'}")
    if not result.verdict.passed:
        raise SystemExit(f"fairness: the verdict failed: {result.verdict}")

"""``ds-bench probe``: where a request's time goes, apart from the comparison.

- ``app``: microseconds per append and per SSE delivery spent in ds-server's
  own code, calling the ASGI app in-process (no sockets, no HTTP server);
- ``bare-asgi``: POSTs/s of a bare ASGI app on the same uvicorn stack as
  ds-server, with the ``post`` scenario's wrk command: the ceiling the HTTP
  layer leaves;
- ``freed-memory``: page faults of large bodies with and without
  ``ds_server.freed_memory`` (see ``ds_bench.freed_memory``);
- ``quota-cost``: microseconds per append through the app, as ``app``, with a
  bucket quota set and without, interleaved; ``--instructions`` adds the
  instructions a whole server spends per POST either way (callgrind, minutes).
"""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import uvloop
from ds_stack.launcher import Process, ProcessSpec, free_port, http_status

from ds_bench import freed_memory, instructions, pg_fencing
from ds_bench._postgres_store import backend_env
from ds_bench.throughput import WRK_CONNECTIONS, WRK_THREADS, parse_wrk

if TYPE_CHECKING:
    import argparse
    from collections.abc import Awaitable, Callable

    Message = dict[str, Any]
    Send = Callable[[Message], Awaitable[None]]

_BODY = b"x" * 100
_WRK_SCRIPT = 'wrk.method = "POST"\nwrk.body = string.rep("x", 100)\n'


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    probe = sub.add_parser("probe", help="per-request costs: in-process app, bare uvicorn")
    probe.add_argument(
        "what", choices=["app", "bare-asgi", "freed-memory", "pg-fencing", "quota-cost"]
    )
    probe.add_argument("--subscribers", type=int, default=1000, help="for app: SSE readers")
    probe.add_argument(
        "--instructions",
        action="store_true",
        help="for quota-cost: also count instructions per POST under callgrind (minutes)",
    )


def run(args: argparse.Namespace) -> None:
    if args.what == "app":
        # The event loop ds-server runs on.
        append_us, delivery_us = uvloop.run(app_costs(args.subscribers))
        print(f"append through the app: {append_us:.1f} µs (best of 5 runs of 20,000, no sockets)")
        print(f"SSE delivery to {args.subscribers} readers: {delivery_us:.1f} µs per reader")
    elif args.what == "quota-cost":
        print(uvloop.run(quota_cost()))
        if args.instructions:
            print(quota_instructions())
    elif args.what == "freed-memory":
        print(freed_memory.report())
    elif args.what == "pg-fencing":
        # A durable Postgres of its own, as bench-storage uses.
        with backend_env("postgres") as env:
            print(pg_fencing.report(env["DS_STORAGE__POSTGRES_URL"]))
    else:
        print(f"bare ASGI app on uvicorn: {bare_asgi_rate():,.0f} POSTs/s (wrk, 50 connections)")


def asgi_scope(
    method: str, path: str, query: bytes = b"", headers: tuple[Any, ...] = ()
) -> Message:
    """An HTTP request's ASGI scope, as uvicorn makes it."""
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query,
        "root_path": "",
        "headers": [(b"host", b"probe"), *headers],
        "server": ("127.0.0.1", 80),
        "client": ("127.0.0.1", 1),
    }


async def app_costs(subscribers: int, appends: int = 20_000) -> tuple[float, float]:
    """(µs per append, µs per SSE delivery) spent inside a memory-mode ds-server app."""
    app, lifespan = await _started_app()
    post = asgi_scope("POST", "/v1/stream/probe", headers=((b"content-type", b"text/plain"),))

    async def body() -> Message:
        return {"type": "http.request", "body": _BODY, "more_body": False}

    async def discard(message: Message) -> None:
        pass

    await app(asgi_scope("PUT", "/v1/stream/probe", headers=post["headers"][1:]), body, discard)
    gc.collect()
    append_us = await _best_of(5, appends, lambda: app(post, body, discard))
    delivery_us = await _fanout_cost(app, subscribers, post, body, discard)
    lifespan.cancel()
    return append_us, delivery_us


async def _started_app(**sections: Any) -> tuple[Any, asyncio.Future[None]]:
    """A memory-mode ds-server app with these settings sections, past its startup."""
    from ds_server.app import asgi_app, create_app
    from ds_server.settings import LimitsSection, Settings, StorageSection

    settings = Settings(
        storage=StorageSection(mode="memory"),
        limits=LimitsSection(max_retained_bytes=1 << 40, max_memory_bytes=1 << 40),
        **sections,
    )
    app: Any = asgi_app(create_app(settings))
    started = asyncio.Event()

    async def startup() -> Message:
        return {"type": "lifespan.startup"}

    async def lifespan_send(message: Message) -> None:
        if message["type"] == "lifespan.startup.complete":
            started.set()

    lifespan = asyncio.ensure_future(
        app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, startup, lifespan_send)
    )
    await started.wait()
    return app, lifespan


async def quota_cost(rounds: int = 6, appends: int = 20_000) -> str:
    """µs per 100-byte append through the app, a bucket quota off and on, interleaved."""
    from ds_server.settings import QuotasSection

    sides = {"off": QuotasSection(), "on": QuotasSection(max_bytes=1 << 40, max_streams=1 << 20)}
    apps = {side: await _started_app(quotas=quotas) for side, quotas in sides.items()}
    headers = ((b"content-type", b"text/plain"),)
    post = asgi_scope("POST", "/v1/stream/probe/s", headers=headers)

    async def body() -> Message:
        return {"type": "http.request", "body": _BODY, "more_body": False}

    async def discard(message: Message) -> None:
        pass

    best = {side: float("inf") for side in sides}
    for app, _ in apps.values():
        await app(asgi_scope("PUT", "/v1/stream/probe/s", headers=headers), body, discard)
    gc.collect()
    for round_ in range(rounds):
        # The order flips every round, so neither side always runs first.
        for side in sorted(sides, reverse=bool(round_ % 2)):
            call = partial(apps[side][0], post, body, discard)
            best[side] = min(best[side], await _best_of(1, appends, call))
    for _, lifespan in apps.values():
        lifespan.cancel()
    return (
        f"append through the app, quotas off: {best['off']:.2f} µs, on: {best['on']:.2f} µs "
        f"({(best['on'] / best['off'] - 1) * 100:+.1f} %; best of {rounds} runs of {appends:,}, "
        "memory backend, no sockets)"
    )


def quota_instructions() -> str:
    """Instructions per 100-byte POST of a whole memory-mode server, quotas off and on."""
    off = instructions.per_request({})
    on = instructions.per_request(
        {"DS_QUOTAS__MAX_BYTES": str(1 << 40), "DS_QUOTAS__MAX_STREAMS": str(1 << 20)}
    )
    return (
        f"instructions per 100-byte POST, quotas off: {off:,.0f}, on: {on:,.0f} "
        f"({(on / off - 1) * 100:+.2f} %; callgrind, memory backend)"
    )


async def _best_of(rounds: int, calls: int, call: Callable[[], Awaitable[None]]) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(calls):
            await call()
        best = min(best, time.perf_counter() - started)
    return best / calls * 1e6


async def _fanout_cost(app: Any, readers: int, post: Message, body: Any, discard: Send) -> float:
    delivered = 0
    all_in = asyncio.Event()
    never = asyncio.Event()

    async def reader_send(message: Message) -> None:
        nonlocal delivered
        if message["type"] == "http.response.body" and message.get("body"):
            delivered += 1
            if delivered == readers:
                all_in.set()

    async def stay_connected() -> Message:
        await never.wait()
        return {"type": "http.disconnect"}

    from ds_server.connection import CONNECTION

    sse = asgi_scope("GET", "/v1/stream/probe", b"offset=now&live=sse")
    # As ds-server's HTTP protocol does, so the readers join the stream's fan-out group.
    sse["extensions"] = {CONNECTION: _Writable()}
    tasks = [asyncio.ensure_future(app(sse, stay_connected, reader_send)) for _ in range(readers)]
    await all_in.wait()  # every reader's first frame (the control event)
    timings = []
    for _ in range(30):
        delivered = 0
        all_in.clear()
        started = time.perf_counter()
        await app(post, body, discard)
        await all_in.wait()
        timings.append(time.perf_counter() - started)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    timings.sort()
    return timings[len(timings) // 2] / readers * 1e6


class _Writable:
    """A connection that takes every write at once (ds_server.connection.Connection)."""

    write_blocked = False
    lost = False

    def on_lost(self, callback: Callable[[], None] | None) -> None:
        """Never lost: nothing to call."""


def bare_asgi_rate(seconds: int = 8) -> float:
    """POSTs/s of :func:`bare_app` on uvicorn configured as ``ds-server`` configures it."""
    port = free_port()
    code = (
        "import uvicorn; uvicorn.run('ds_bench.probes:bare_app', host='127.0.0.1', "
        f"port={port}, loop='uvloop', http='httptools', lifespan='off', "
        "log_level='warning', access_log=False, server_header=False, proxy_headers=False)"
    )
    url = f"http://127.0.0.1:{port}/"
    server = Process(
        ProcessSpec(
            name="bare ASGI app",
            argv=(sys.executable, "-c", code),
            # It answers 204 to everything: any answer means it listens.
            ready=lambda: http_status(url) is not None,
            serves_port=port,
        )
    )
    with server, tempfile.TemporaryDirectory(prefix="ds-bench-probe-") as scratch:
        script = Path(scratch) / "post.lua"
        script.write_text(_WRK_SCRIPT)
        argv = ["wrk", f"-t{WRK_THREADS}", f"-c{WRK_CONNECTIONS}", f"-d{seconds}s"]
        argv += ["--latency", "-s", str(script), url]
        output = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return parse_wrk(output)[0]


async def bare_app(scope: Message, receive: Callable[[], Awaitable[Message]], send: Send) -> None:
    """Read the body, answer 204 with one header: HTTP-layer work only."""
    while (await receive()).get("more_body"):
        pass
    await send(
        {"type": "http.response.start", "status": 204, "headers": [(b"stream-next-offset", b"0")]}
    )
    await send({"type": "http.response.body", "body": b""})

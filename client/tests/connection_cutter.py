"""A TCP proxy that cuts connections part-way, in either direction, on its own thread.

Stands between a client and the gateway. Each connection is given one
direction and a byte budget for it, drawn from a seeded random source; when
the budget runs out the proxy resets both sides. Every connection is cut
sooner or later, so a client keeps meeting broken connections. A request cut short never reaches the
server whole; a response cut short leaves the client not knowing whether its
request was applied, which is what exactly-once has to survive.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import threading

from ds_stack.ports import free_port

_CHUNK = 16384


class ConnectionCutter:
    """Forwards ``127.0.0.1:{port}`` to ``upstream_port``, cutting some connections."""

    def __init__(
        self,
        upstream_port: int,
        *,
        seed: int,
        request_budget: tuple[int, int] = (200, 20_000),
        response_budget: tuple[int, int] = (100, 3_000),
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._upstream_port = upstream_port
        self._random = random.Random(seed)
        self._request_budget = request_budget
        self._response_budget = response_budget
        self.connections = 0
        self.request_cuts = 0
        self.response_cuts = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="connection-cutter", daemon=True)

    @property
    def cuts(self) -> int:
        return self.request_cuts + self.response_cuts

    def __enter__(self) -> ConnectionCutter:
        self._thread.start()
        assert self._ready.wait(10), "the cutter did not start"
        return self

    def __exit__(self, *_: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(
            asyncio.start_server(self._handle, "127.0.0.1", self.port)
        )
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            server.close()
            # Connections still open end here, their tasks cancelled and awaited.
            tasks = asyncio.all_tasks(self._loop)
            for task in tasks:
                task.cancel()
            self._loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            self._loop.run_until_complete(server.wait_closed())
            self._loop.close()

    async def _handle(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            upstream_r, upstream_w = await asyncio.open_connection("127.0.0.1", self._upstream_port)
        except OSError:
            client_w.close()
            return
        request_budget = response_budget = None
        if self._random.random() < 0.5:
            request_budget = self._random.randint(*self._request_budget)
        else:
            response_budget = self._random.randint(*self._response_budget)
        done = asyncio.Event()
        pumps = [
            asyncio.ensure_future(
                self._pump(client_r, upstream_w, request_budget, "request", done)
            ),
            asyncio.ensure_future(
                self._pump(upstream_r, client_w, response_budget, "response", done)
            ),
        ]
        try:
            await done.wait()
        finally:
            for pump in pumps:
                pump.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)
            for writer in (client_w, upstream_w):
                # A reset, not a polite close: the peer sees the connection break.
                with contextlib.suppress(Exception):
                    writer.transport.abort()

    async def _pump(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        budget: int | None,
        direction: str,
        done: asyncio.Event,
    ) -> None:
        try:
            while True:
                data = await reader.read(_CHUNK)
                if not data:
                    return
                if budget is not None and len(data) >= budget:
                    writer.write(data[:budget])
                    await writer.drain()
                    if direction == "request":
                        self.request_cuts += 1
                    else:
                        self.response_cuts += 1
                    return
                if budget is not None:
                    budget -= len(data)
                writer.write(data)
                await writer.drain()
        except (OSError, asyncio.IncompleteReadError):
            return
        finally:
            done.set()

"""Many SSE readers on one stream: the tail group writes to each of them.

Driven on the raw ASGI app, so hundreds of concurrent readers and a reader
whose client stops reading can be set up exactly.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

import pytest
from ds_server.app import asgi_app, create_app
from ds_server.routes import _fanout
from ds_server.settings import ServerSection

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

    from ds_server.settings import Settings

    Message = dict[str, Any]
    App = Callable[..., Awaitable[None]]

READERS = 200


def _scope(method: str, query: bytes = b"", content_type: bytes = b"text/plain") -> Message:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": "/v1/stream/fan",
        "raw_path": b"/v1/stream/fan",
        "query_string": query,
        "root_path": "",
        "headers": [(b"host", b"test"), (b"content-type", content_type)],
        "server": ("127.0.0.1", 80),
        "client": ("127.0.0.1", 1),
    }


@pytest.fixture
async def app(settings_factory: Callable[..., Settings]) -> AsyncIterator[App]:
    settings = settings_factory(server=ServerSection(sse_reconnect_interval_secs=0))
    application: Any = asgi_app(create_app(settings))
    started = asyncio.Event()
    events: asyncio.Queue[Message] = asyncio.Queue()
    events.put_nowait({"type": "lifespan.startup"})

    async def lifespan_send(message: Message) -> None:
        if message["type"] == "lifespan.startup.complete":
            started.set()

    scope = {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}
    lifespan = asyncio.ensure_future(application(scope, events.get, lifespan_send))
    await started.wait()
    yield application
    lifespan.cancel()


async def _call(app: App, method: str, body: bytes = b"", headers: Message | None = None) -> None:
    scope = _scope(method)
    if headers:
        scope["headers"] = scope["headers"] + list(headers.items())

    async def receive() -> Message:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            assert message["status"] < 300, message

    await app(scope, receive, send)


class Reader:
    """One SSE client: collects the body; can stop reading (its send blocks)."""

    def __init__(self) -> None:
        self.body = bytearray()
        self.ended = asyncio.Event()
        self.stalled = False
        self.gone = asyncio.Event()

    async def send(self, message: Message) -> None:
        if self.stalled:
            await asyncio.Event().wait()  # a paused transport that never drains
        if message["type"] == "http.response.body":
            self.body += message.get("body", b"")
            if not message.get("more_body", False):
                self.ended.set()

    async def receive(self) -> Message:
        await self.gone.wait()
        return {"type": "http.disconnect"}

    def data(self) -> str:
        return "".join(
            line[len("data:") :]
            for block in self.body.decode().split("\n\n")
            if "event: data" in block
            for line in block.split("\n")
            if line.startswith("data:")
        )

    def last_control(self) -> Message:
        blocks = [b for b in self.body.decode().split("\n\n") if "event: control" in b]
        line = next(x for x in blocks[-1].split("\n") if x.startswith("data:"))
        decoded: Message = json.loads(line[len("data:") :])
        return decoded


async def _open(app: App, readers: list[Reader]) -> list[asyncio.Future[None]]:
    tasks = [
        asyncio.ensure_future(app(_scope("GET", b"offset=-1&live=sse"), r.receive, r.send))
        for r in readers
    ]
    for _ in range(200):  # until every reader has its first frame
        if all(r.body for r in readers):
            break
        await asyncio.sleep(0.01)
    return tasks


async def test_every_reader_gets_every_message_once_then_the_close(app: App) -> None:
    await _call(app, "PUT")
    readers = [Reader() for _ in range(READERS)]
    tasks = await _open(app, readers)
    for seq in range(20):
        await _call(app, "POST", f"{seq:02d},".encode())
        await asyncio.sleep(0.005)
    await _call(app, "POST", headers={b"stream-closed": b"true"})
    await asyncio.wait_for(asyncio.gather(*(r.ended.wait() for r in readers)), 10)
    expected = "".join(f"{seq:02d}," for seq in range(20))
    for reader in readers:
        assert reader.data() == expected
        control = reader.last_control()
        assert control["streamClosed"] is True
        assert control["streamNextOffset"] == f"{len(expected):020d}"
    await asyncio.gather(*tasks)


async def test_a_reader_that_stops_reading_does_not_hold_up_the_others(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_fanout, "SEND_PATIENCE_SECS", 0.05)
    await _call(app, "PUT")
    readers = [Reader() for _ in range(20)]
    tasks = await _open(app, readers)
    stuck = readers[3]
    stuck.stalled = True
    for seq in range(5):
        await _call(app, "POST", f"{seq}".encode())
        await asyncio.sleep(0.02)
    await _call(app, "POST", headers={b"stream-closed": b"true"})
    others = [r for r in readers if r is not stuck]
    await asyncio.wait_for(asyncio.gather(*(r.ended.wait() for r in others)), 10)
    for reader in others:
        assert reader.data() == "01234"
    assert not stuck.ended.is_set()
    stuck.gone.set()  # its client disconnects; its request ends cleanly
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_readers_that_disconnect_leave_the_group(app: App) -> None:
    await _call(app, "PUT")
    readers = [Reader() for _ in range(10)]
    tasks = await _open(app, readers)
    for reader in readers[:5]:
        reader.gone.set()
    await asyncio.sleep(0.05)
    await _call(app, "POST", b"x")
    await _call(app, "POST", headers={b"stream-closed": b"true"})
    await asyncio.wait_for(asyncio.gather(*(r.ended.wait() for r in readers[5:])), 10)
    assert all(r.data() == "x" for r in readers[5:])
    assert all(r.data() == "" for r in readers[:5])
    await asyncio.gather(*tasks, return_exceptions=True)

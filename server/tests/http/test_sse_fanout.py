"""Many SSE readers on one stream: the tail group writes to each of them.

Driven on the raw ASGI app, so hundreds of concurrent readers and a reader
whose client stops reading can be set up exactly. Each reader presents
its connection in the scope, as ds-server's HTTP protocol does; readers
over real sockets are in ``server/tests/live``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import TYPE_CHECKING, Any

import pytest
from ds_server.app import create_app
from ds_server.connection import CONNECTION
from ds_server.routes._context import STATE_KEY
from ds_server.settings import ServerSection

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

    from ds_server.app import DsApp
    from ds_server.routes._context import ServerContext
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


class Served:
    """The ASGI app under test and its server context (to look at the fan-out groups)."""

    def __init__(self, app: DsApp) -> None:
        self.asgi: App = app.front  # type: ignore[assignment]
        self.ctx: ServerContext = app.state[STATE_KEY]

    async def __call__(self, scope: Message, receive: Any, send: Any) -> None:
        await self.asgi(scope, receive, send)

    def group_size(self) -> int:
        return sum(len(group._members) for group in self.ctx.sse.tails.groups.values())


@contextlib.asynccontextmanager
async def _running(settings: Settings) -> AsyncIterator[Served]:
    served = Served(create_app(settings))
    started = asyncio.Event()
    events: asyncio.Queue[Message] = asyncio.Queue()
    events.put_nowait({"type": "lifespan.startup"})

    async def lifespan_send(message: Message) -> None:
        if message["type"] == "lifespan.startup.complete":
            started.set()

    scope = {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}
    lifespan = asyncio.ensure_future(served(scope, events.get, lifespan_send))
    await started.wait()
    try:
        yield served
    finally:
        lifespan.cancel()


@pytest.fixture
async def app(settings_factory: Callable[..., Settings]) -> AsyncIterator[Served]:
    settings = settings_factory(server=ServerSection(sse_reconnect_interval_secs=0))
    async with _running(settings) as served:
        yield served


@pytest.fixture
async def small_reads(settings_factory: Callable[..., Settings]) -> AsyncIterator[Served]:
    """Reads of 1 KiB at most, so a reader behind catches up frame by frame."""
    server = ServerSection(sse_reconnect_interval_secs=0, read_chunk_bytes=1024)
    async with _running(settings_factory(server=server)) as served:
        yield served


async def _call(
    app: Served, method: str, body: bytes = b"", headers: Message | None = None
) -> None:
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
    """One SSE client: collects the body; can stop reading, as a full socket does.

    It is also its own connection (``ds_server.connection.Connection``): a
    stalled reader's writes are blocked, as a paused transport's are.
    """

    def __init__(self) -> None:
        self.body = bytearray()
        self.ended = asyncio.Event()
        self.stalled = False
        self.gone = asyncio.Event()
        self.sends_while_stalled = 0
        self.sends_after_gone = 0
        self._drained = asyncio.Event()
        self._on_lost: Callable[[], None] | None = None

    @property
    def write_blocked(self) -> bool:
        return self.stalled

    @property
    def lost(self) -> bool:
        return self.gone.is_set()

    def on_lost(self, callback: Callable[[], None] | None) -> None:
        if callback is not None and self.lost:
            callback()
        else:
            self._on_lost = callback

    def stall(self) -> None:
        self.stalled = True
        self._drained.clear()

    def resume(self) -> None:
        self.stalled = False
        self._drained.set()

    def disconnect(self) -> None:
        self.gone.set()
        self._drained.set()
        callback, self._on_lost = self._on_lost, None
        if callback is not None:
            callback()

    def scope(self) -> Message:
        scope = _scope("GET", b"offset=-1&live=sse")
        scope["extensions"] = {CONNECTION: self}
        return scope

    async def send(self, message: Message) -> None:
        if self.gone.is_set():
            self.sends_after_gone += 1
        if self.stalled:
            self.sends_while_stalled += 1
            await self._drained.wait()  # a paused transport, until it drains
        if self.gone.is_set():
            return
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


async def _open(app: Served, readers: list[Reader]) -> list[asyncio.Future[None]]:
    tasks = [asyncio.ensure_future(app(r.scope(), r.receive, r.send)) for r in readers]
    for _ in range(200):  # until every reader has its first frame and sleeps in the group
        if all(r.body for r in readers) and app.group_size() == len(readers):
            break
        await asyncio.sleep(0.01)
    assert app.group_size() == len(readers)
    return tasks


async def test_every_reader_gets_every_message_once_then_the_close(app: Served) -> None:
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


async def test_a_reader_that_stops_reading_is_skipped_without_waiting(app: Served) -> None:
    await _call(app, "PUT")
    readers = [Reader() for _ in range(20)]
    tasks = await _open(app, readers)
    stuck = readers[3]
    stuck.stall()
    for seq in range(5):
        await _call(app, "POST", f"{seq}".encode())
        await asyncio.sleep(0.02)
    await _call(app, "POST", headers={b"stream-closed": b"true"})
    others = [r for r in readers if r is not stuck]
    # No patience timer to wait out: the others get the close at once.
    await asyncio.wait_for(asyncio.gather(*(r.ended.wait() for r in others)), 2)
    for reader in others:
        assert reader.data() == "01234"
    assert not stuck.ended.is_set()
    # The group never wrote to it; its own request tried once, and waits there.
    assert stuck.sends_while_stalled == 1
    stuck.disconnect()  # its client goes away; its request ends cleanly
    await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 5)


async def test_a_reader_that_catches_up_rejoins_the_group(app: Served) -> None:
    await _call(app, "PUT")
    readers = [Reader() for _ in range(5)]
    tasks = await _open(app, readers)
    slow = readers[0]
    slow.stall()
    await _call(app, "POST", b"a")
    await asyncio.sleep(0.02)
    assert app.group_size() == 4
    slow.resume()  # its transport drains: it sends "a" itself, then is at the tail again
    for _ in range(200):
        if app.group_size() == 5:
            break
        await asyncio.sleep(0.01)
    assert app.group_size() == 5
    await _call(app, "POST", b"b")
    await _call(app, "POST", headers={b"stream-closed": b"true"})
    await asyncio.wait_for(asyncio.gather(*(r.ended.wait() for r in readers)), 5)
    assert all(r.data() == "ab" for r in readers)
    await asyncio.gather(*tasks)


async def test_readers_that_disconnect_leave_the_group(app: Served) -> None:
    await _call(app, "PUT")
    readers = [Reader() for _ in range(10)]
    tasks = await _open(app, readers)
    for reader in readers[:5]:
        reader.disconnect()
    await asyncio.sleep(0.05)
    await _call(app, "POST", b"x")
    await _call(app, "POST", headers={b"stream-closed": b"true"})
    await asyncio.wait_for(asyncio.gather(*(r.ended.wait() for r in readers[5:])), 10)
    assert all(r.data() == "x" for r in readers[5:])
    assert all(r.data() == "" for r in readers[:5])
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_a_reader_far_behind_that_goes_away_is_not_read_to_the_end(
    small_reads: Served,
) -> None:
    app = small_reads
    await _call(app, "PUT")
    for seq in range(40):  # 40 KiB: 40 frames of 1 KiB
        await _call(app, "POST", bytes([65 + seq % 26]) * 1024)
    reader = Reader()
    frames = 0

    async def send(message: Message) -> None:
        nonlocal frames
        await Reader.send(reader, message)
        if message.get("body"):
            frames += 1
            if frames == 3:
                reader.disconnect()  # the client goes away while far behind

    task = asyncio.ensure_future(app(reader.scope(), reader.receive, send))
    await asyncio.wait_for(task, 5)
    # Before, every remaining frame was read, framed and sent into the void.
    assert reader.sends_after_gone <= 1

"""The SSE event loop (``routes/_sse.sse_events``) against a stream that never goes quiet."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, cast

from ds_server.live import LiveNotifier
from ds_server.routes._context import ServerContext
from ds_server.routes._sse import sse_events
from ds_server.settings import ServerSection, Settings, StorageSection
from ds_server.stores.base import Expiry, ReadResult, StreamInfo

if TYPE_CHECKING:
    from ds_server.stores.base import Store

# Long enough to tell "ended at the interval" from "never ended".
PATIENCE_SECS = 3.0


class _EndlessStream:
    """A stream with more data behind every read, whose reads suspend (as sqlite's do)."""

    def __init__(self) -> None:
        self.live = LiveNotifier()

    async def read(self, name: str, position: int, max_bytes: int) -> ReadResult:
        await asyncio.sleep(0)
        info = StreamInfo("s1", name, "text/plain", position + 2, False, Expiry(), None, 0.0)
        return ReadResult(info=info, start=position, next_offset=position + 1, chunks=[b"x"])


async def test_a_busy_stream_still_ends_at_the_reconnect_interval() -> None:
    store = _EndlessStream()
    settings = Settings(
        server=ServerSection(sse_reconnect_interval_secs=0.05),
        storage=StorageSection(mode="memory"),
    )
    ctx = ServerContext(settings=settings, store=cast("Store", store))
    loop = asyncio.get_running_loop()
    started = loop.time()
    frames = 0
    events = sse_events(
        ctx.sse, "s", await store.read("s", 0, 1024), cursor=None, base64_encoded=False
    )
    async for _ in events:
        frames += 1
        if loop.time() - started > PATIENCE_SECS:
            break
    await events.aclose()
    # The reader never had to wait, yet it stopped at the interval.
    assert loop.time() - started < PATIENCE_SECS
    assert frames > 1


async def test_a_reader_whose_token_ends_first_ends_with_it() -> None:
    """What is left of the reader's token shortens the connection's life (auth/live_reads.py)."""
    store = _EndlessStream()
    settings = Settings(
        server=ServerSection(sse_reconnect_interval_secs=60),
        storage=StorageSection(mode="memory"),
    )
    ctx = ServerContext(settings=settings, store=cast("Store", store))
    loop = asyncio.get_running_loop()
    started = loop.time()
    events = sse_events(
        ctx.sse,
        "s",
        await store.read("s", 0, 1024),
        cursor=None,
        base64_encoded=False,
        token_secs=0.2,
    )
    frames = [frame async for frame in events]
    # Ended by the token, not the 60 s interval, and after a whole frame with its control event.
    assert loop.time() - started < PATIENCE_SECS
    assert frames[-1].endswith(b"\n\n")
    assert b"event: control" in frames[-1]

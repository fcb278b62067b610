"""follow(): bootstrap, then SSE with reconnects, long-poll fallback, re-bootstrap on 410."""

from __future__ import annotations

import asyncio
import json
import os
from typing import TYPE_CHECKING

import httpx
import pytest
from durable_sessions import Bootstrapped, Update, follow, publish_snapshot
from durable_streams import AsyncDurableStream, DurableStreamError, StreamNotFoundError

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from durable_sessions import Event

JSON = "application/json"


class RequestLog:
    """Counts the live reads a client makes, by mode."""

    def __init__(self) -> None:
        self.modes: list[str] = []

    async def __call__(self, request: httpx.Request) -> None:
        live = request.url.params.get("live")
        if live is not None:
            self.modes.append(live)

    def count(self, mode: str) -> int:
        return self.modes.count(mode)


class NoSseTransport(httpx.AsyncBaseTransport):
    """Stands in for a proxy that refuses SSE: ``live=sse`` gets a 400, the rest goes through."""

    def __init__(self) -> None:
        self._inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.params.get("live") == "sse":
            return httpx.Response(400, text="SSE is not supported here", request=request)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _client(
    log: RequestLog, transport: httpx.AsyncBaseTransport | None = None
) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        timeout=httpx.Timeout(10.0, read=30.0),
        event_hooks={"request": [log]},
        transport=transport,
    )


async def _append_json(url: str, *messages: object) -> list[str]:
    async with AsyncDurableStream(url, content_type=JSON, batching=False) as handle:
        return [(await handle.append(message)).next_offset for message in messages]


async def _close(url: str) -> None:
    async with httpx.AsyncClient() as client:
        response = await client.post(url, headers={"Stream-Closed": "true"})
        assert response.status_code == 204


async def _collect(
    events: AsyncIterator[Event], until: Callable[[list[Event]], bool], within: float = 20.0
) -> list[Event]:
    """Events until ``until`` holds or the iteration ends; fails after ``within`` seconds."""
    seen: list[Event] = []

    async def run() -> None:
        async for event in events:
            seen.append(event)
            if until(seen):
                return

    await asyncio.wait_for(run(), within)
    return seen


def _json_messages(events: list[Event]) -> list[object]:
    return [json.loads(m) for e in events if isinstance(e, Update) for m in e.messages]


async def test_follow_bootstraps_then_tails(new_stream: Callable[..., str]) -> None:
    url = new_stream()
    offsets = await _append_json(url, {"n": 0}, {"n": 1})
    await publish_snapshot(url, offsets[0], b"state-0")
    log = RequestLog()
    async with _client(log) as client:
        events = follow(url, client=client)
        first = await asyncio.wait_for(anext(events), 10)
        assert isinstance(first, Bootstrapped)
        assert first.bootstrap.snapshot == b"state-0"
        assert first.bootstrap.messages == [(JSON, b'{"n": 1}')]
        await _append_json(url, {"n": 2}, {"n": 3})
        seen = await _collect(events, lambda seen: len(_json_messages(seen)) >= 2)
        await events.aclose()
    assert _json_messages(seen) == [{"n": 2}, {"n": 3}]
    assert log.count("long-poll") == 0


@pytest.mark.timeout(60)
async def test_follow_survives_server_initiated_sse_reconnects(
    new_stream: Callable[..., str], sse_reconnect_secs: float
) -> None:
    url = new_stream()
    log = RequestLog()
    total = 20
    spacing = 0.25  # the writer runs for 5 s: past at least four reconnect intervals

    async def writer() -> None:
        async with AsyncDurableStream(url, content_type=JSON, batching=False) as handle:
            for n in range(total):
                await asyncio.sleep(spacing)
                await handle.append({"n": n})

    async with _client(log) as client:
        writing = asyncio.create_task(writer())
        events = follow(url, client=client)
        seen = await _collect(events, lambda seen: len(_json_messages(seen)) >= total, 30)
        await events.aclose()
        await writing
    assert _json_messages(seen) == [{"n": n} for n in range(total)]
    assert total * spacing > 3 * sse_reconnect_secs
    assert log.count("sse") >= 4  # the first connection and at least three reconnects
    assert log.count("long-poll") == 0
    # Offsets only grow, so no message was read twice.
    offsets = [e.next_offset for e in seen if isinstance(e, Update)]
    assert offsets == sorted(set(offsets))


async def test_follow_binary_stream_over_sse(new_stream: Callable[..., str]) -> None:
    url = new_stream("application/octet-stream")
    payloads = [bytes(range(256)), os.urandom(5000), b"\r\n\r\n"]
    log = RequestLog()
    async with _client(log) as client:
        events = follow(url, client=client)
        assert isinstance(await asyncio.wait_for(anext(events), 10), Bootstrapped)
        async with AsyncDurableStream(
            url, content_type="application/octet-stream", batching=False
        ) as handle:
            for payload in payloads:
                await handle.append(payload)
        expected = b"".join(payloads)

        def received(seen: list[Event]) -> bytes:
            return b"".join(m for e in seen if isinstance(e, Update) for m in e.messages)

        seen = await _collect(events, lambda seen: len(received(seen)) >= len(expected))
        await events.aclose()
    assert received(seen) == expected
    assert log.count("sse") >= 1


async def test_follow_ends_when_the_stream_closes(new_stream: Callable[..., str]) -> None:
    url = new_stream()
    await _append_json(url, {"n": 0})
    async with _client(RequestLog()) as client:
        events = follow(url, client=client)
        assert isinstance(await asyncio.wait_for(anext(events), 10), Bootstrapped)
        await _append_json(url, {"n": 1})
        await _close(url)
        seen = await _collect(events, lambda seen: False)
    assert _json_messages(seen) == [{"n": 1}]
    last = seen[-1]
    assert isinstance(last, Update)
    assert last.closed


@pytest.mark.parametrize("forced", [True, False], ids=["live=long-poll", "sse-refused"])
async def test_follow_over_long_poll(new_stream: Callable[..., str], forced: bool) -> None:
    url = new_stream()
    await _append_json(url, {"n": 0})
    log = RequestLog()
    transport = None if forced else NoSseTransport()
    async with _client(log, transport) as client:
        events = follow(url, client=client, live="long-poll" if forced else "auto")
        first = await asyncio.wait_for(anext(events), 10)
        assert isinstance(first, Bootstrapped)
        await _append_json(url, {"n": 1})
        seen = await _collect(events, lambda seen: len(_json_messages(seen)) >= 1)
        await _append_json(url, {"n": 2}, {"n": 3})
        await _close(url)
        seen += await _collect(events, lambda seen: False)
    assert _json_messages(seen) == [{"n": 1}, {"n": 2}, {"n": 3}]
    assert log.count("sse") == (0 if forced else 1)
    assert log.count("long-poll") >= 2


async def test_follow_sse_only_raises_when_sse_is_refused(new_stream: Callable[..., str]) -> None:
    url = new_stream()
    async with _client(RequestLog(), NoSseTransport()) as client:
        events = follow(url, client=client, live="sse")
        assert isinstance(await asyncio.wait_for(anext(events), 10), Bootstrapped)
        with pytest.raises(DurableStreamError):
            await asyncio.wait_for(anext(events), 10)


async def test_follow_rebootstraps_when_a_snapshot_passes_it(
    new_stream: Callable[..., str],
) -> None:
    """A reader left behind by a newly published snapshot gets 410, bootstraps again, goes on."""
    url = new_stream()
    offsets = await _append_json(url, {"n": 0}, {"n": 1}, {"n": 2})
    log = RequestLog()
    async with _client(log) as client:
        # Long-poll rounds make "behind" deterministic: nothing is read while the
        # reader holds an update.
        events = follow(url, client=client, offset=offsets[0], live="long-poll")
        first = await asyncio.wait_for(anext(events), 10)
        assert isinstance(first, Update)
        assert [json.loads(m) for m in first.messages] == [{"n": 1}, {"n": 2}]
        later = await _append_json(url, {"n": 3}, {"n": 4})
        await publish_snapshot(url, later[-1], b"state-4")
        again = await asyncio.wait_for(anext(events), 10)
        assert isinstance(again, Bootstrapped)
        assert again.bootstrap.snapshot == b"state-4"
        assert again.bootstrap.snapshot_offset == later[-1]
        assert again.bootstrap.messages == []
        await _append_json(url, {"n": 5})
        seen = await _collect(events, lambda seen: len(_json_messages(seen)) >= 1)
        await events.aclose()
    assert _json_messages(seen) == [{"n": 5}]


async def test_follow_from_a_checkpoint_older_than_the_snapshot_rebootstraps(
    new_stream: Callable[..., str],
) -> None:
    url = new_stream()
    offsets = await _append_json(url, {"n": 0}, {"n": 1}, {"n": 2})
    checkpoint = offsets[0]
    await publish_snapshot(url, offsets[1], b"state-1")
    log = RequestLog()
    async with _client(log) as client:
        events = follow(url, client=client, offset=checkpoint)
        first = await asyncio.wait_for(anext(events), 10)
        assert isinstance(first, Bootstrapped)
        assert first.bootstrap.snapshot == b"state-1"
        assert first.bootstrap.messages == [(JSON, b'{"n": 2}')]
        await _append_json(url, {"n": 3})
        seen = await _collect(events, lambda seen: len(_json_messages(seen)) >= 1)
        await events.aclose()
    assert _json_messages(seen) == [{"n": 3}]
    assert log.modes[0] == "sse"


async def test_follow_of_a_missing_stream_raises(bucket_url: str) -> None:
    with pytest.raises(StreamNotFoundError):
        await anext(follow(f"{bucket_url}/missing"))

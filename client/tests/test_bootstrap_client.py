"""bootstrap() and publish_snapshot() against a real server."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

import httpx
import pytest
from durable_sessions import (
    Bootstrap,
    BootstrapFormatError,
    bootstrap,
    parse_bootstrap,
    publish_snapshot,
)
from durable_streams import AsyncDurableStream, DurableStreamError, StreamNotFoundError

if TYPE_CHECKING:
    from collections.abc import Callable

MESSAGES = [{"op": "set", "k": "title", "v": "hello"}, {"op": "del", "k": "x"}, [1, 2]]


async def _append_json(url: str, *messages: object) -> list[str]:
    async with AsyncDurableStream(url, content_type="application/json", batching=False) as handle:
        return [(await handle.append(message)).next_offset for message in messages]


async def test_bootstrap_without_a_snapshot(new_stream: Callable[..., str]) -> None:
    url = new_stream()
    offsets = await _append_json(url, *MESSAGES)
    state = await bootstrap(url)
    assert state == Bootstrap(
        snapshot=None,
        snapshot_content_type=None,
        snapshot_offset="-1",
        messages=[("application/json", json.dumps(m).encode()) for m in MESSAGES],
        next_offset=offsets[-1],
        up_to_date=True,
    )


async def test_bootstrap_with_a_snapshot(new_stream: Callable[..., str]) -> None:
    url = new_stream()
    offsets = await _append_json(url, *MESSAGES)
    await publish_snapshot(
        url, offsets[1], b'{"title":"hello"}', content_type="application/x-state"
    )
    state = await bootstrap(url)
    assert state.snapshot == b'{"title":"hello"}'
    assert state.snapshot_content_type == "application/x-state"
    assert state.snapshot_offset == offsets[1]
    assert state.messages == [("application/json", b"[1, 2]")]
    assert state.next_offset == offsets[-1]


async def test_bootstrap_of_binary_appends_is_exact(new_stream: Callable[..., str]) -> None:
    url = new_stream("application/octet-stream")
    payloads = [bytes(range(256)), b"\r\n--\r\n", os.urandom(100_000)]
    async with AsyncDurableStream(
        url, content_type="application/octet-stream", batching=False
    ) as handle:
        for payload in payloads:
            await handle.append(payload)
    state = await bootstrap(url)
    assert [body for _, body in state.messages] == payloads


async def test_bootstrap_with_a_shared_client(new_stream: Callable[..., str]) -> None:
    url = new_stream()
    await _append_json(url, {"a": 1})
    async with httpx.AsyncClient() as client:
        state = await bootstrap(url, client=client)
        assert not client.is_closed
    assert state.messages == [("application/json", b'{"a": 1}')]


async def test_bootstrap_of_a_missing_stream_raises(bucket_url: str) -> None:
    with pytest.raises(StreamNotFoundError):
        await bootstrap(f"{bucket_url}/no-such-stream")


async def test_publish_snapshot_failures_carry_the_status(new_stream: Callable[..., str]) -> None:
    url = new_stream()
    offsets = await _append_json(url, {"a": 1})
    with pytest.raises(DurableStreamError) as beyond:
        await publish_snapshot(url, f"{int(offsets[0]) + 1:020d}", b"")
    assert beyond.value.status == 409


def test_parse_rejects_what_is_not_multipart() -> None:
    headers = {"Stream-Snapshot-Offset": "-1", "Stream-Next-Offset": "0" * 20}
    with pytest.raises(BootstrapFormatError):
        parse_bootstrap("application/json", b"[]", headers)
    truncated = b"--b\r\nContent-Type: application/octet-stream\r\n\r\n\r\n--b\r\nContent-Type: x/y"
    with pytest.raises(BootstrapFormatError):
        parse_bootstrap("multipart/mixed; boundary=b", truncated, headers)


def test_parse_takes_the_body_in_pieces() -> None:
    body = (
        b"--b\r\nContent-Type: application/x-s\r\n\r\nSNAP\r\n"
        b"--b\r\nContent-Type: text/plain; charset=utf-8\r\n\r\none\r\n--b--\r\n"
    )
    headers = {"stream-snapshot-offset": "0" * 19 + "4", "stream-next-offset": "0" * 19 + "7"}
    pieces = [body[i : i + 3] for i in range(0, len(body), 3)]
    state = parse_bootstrap("multipart/mixed; boundary=b", pieces, headers)
    assert (state.snapshot, state.snapshot_content_type) == (b"SNAP", "application/x-s")
    assert state.messages == [("text/plain; charset=utf-8", b"one")]
    assert state.up_to_date is False

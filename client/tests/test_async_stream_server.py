"""AsyncStreamServer (what asyncio services say to a server) against a real server."""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest
from durable_sessions.async_server import AsyncStreamServer, UnexpectedStatusError
from durable_sessions.protocol.offsets import format_offset
from durable_sessions.protocol.patterns import PatternError, parse_pattern
from durable_sessions.protocol.subscriptions import ALREADY_CLAIMED, NO_PENDING_WORK, Grant
from durable_streams import DurableStreamError, RetentionGoneError

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from conftest import NewStream


@pytest.fixture
async def server(server_url: str) -> AsyncIterator[AsyncStreamServer]:
    async with AsyncStreamServer(server_url) as server:
        yield server


def _path(url: str) -> str:
    """``bucket/stream`` of a ``/ds/bucket/stream`` URL."""
    return urlsplit(url).path.removeprefix("/ds/")


def _unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


async def test_metadata_listing_and_find(server: AsyncStreamServer, new_stream: NewStream) -> None:
    path = _path(new_stream())
    await server.append_json(path, b'[{"n":1},{"n":2}]')
    info = await server.head(path)
    assert info is not None
    assert (info.path, info.is_json, info.tail > 0, info.closed) == (path, True, True, False)
    assert await server.head(path + "-missing") is None

    bucket = path.split("/")[0]
    listed = {found.path: found for found in await server.list_bucket(bucket)}
    assert listed[path].tail == info.tail
    assert await server.list_bucket(_unique("no-such-bucket")) == []

    assert [found.path for found in await server.find(parse_pattern(path))] == [path]
    assert await server.find(parse_pattern(path + "-missing")) == []
    assert path in {found.path for found in await server.find(parse_pattern(f"{bucket}/*"))}
    with pytest.raises(PatternError):
        await server.find(parse_pattern(f"{bucket}/**"))


async def test_buckets_and_json_streams_are_made_once(
    server: AsyncStreamServer, new_stream: NewStream
) -> None:
    bucket = _unique("async-bucket")
    await server.ensure_bucket(bucket)
    await server.ensure_bucket(bucket)  # 409: it exists; not an error
    assert await server.list_bucket(bucket) == []

    path = f"{bucket}/s"
    assert await server.create_json_stream(path) is True
    assert await server.create_json_stream(path) is False
    info = await server.head(path)
    assert info is not None
    assert info.is_json

    text = _path(new_stream("text/plain"))
    with pytest.raises(UnexpectedStatusError) as refused:
        await server.create_json_stream(text)
    assert refused.value.status == 409
    with pytest.raises(UnexpectedStatusError) as missing:
        await server.append_json(f"{bucket}/missing", b"[1]")
    assert missing.value.status == 404


async def test_snapshots_are_published_by_path(
    server: AsyncStreamServer, new_stream: NewStream
) -> None:
    path = _path(new_stream())
    await server.append_json(path, b'{"n":1}')
    first = await server.head(path)
    assert first is not None
    await server.append_json(path, b'{"n":2}')
    await server.publish_snapshot(path, first.tail, json.dumps({"n": 1}).encode())
    info = await server.head(path)
    assert info is not None
    assert info.snapshot_offset == first.tail

    # History before the snapshot is gone: reads of it, and older snapshots, answer 410.
    response = await server.http.get(server.stream_url(path), params={"offset": format_offset(0)})
    assert response.status_code == RetentionGoneError().status
    with pytest.raises(UnexpectedStatusError) as older:
        await server.publish_snapshot(path, 0, b"{}")
    assert older.value.status == RetentionGoneError().status

    with pytest.raises(DurableStreamError, match="no snapshots"):
        await server.publish_snapshot("a/b/c", 0, b"{}")


async def test_subscriptions_claim_ack_renew_and_release(
    server: AsyncStreamServer, new_stream: NewStream
) -> None:
    watched = _path(new_stream())
    bucket = watched.split("/")[0]
    wakes = f"{bucket}/{_unique('wakes')}"
    await server.create_json_stream(wakes)
    subscription = _unique("async-sub")
    config = {
        "type": "pull-wake",
        "pattern": watched,
        "wake_stream": wakes,
        "lease_ttl_ms": 30_000,
    }
    assert await server.put_subscription(subscription, config) is True
    assert await server.put_subscription(subscription, config) is False
    # Configured otherwise: the new configuration replaces the old one.
    assert await server.put_subscription(subscription, {**config, "lease_ttl_ms": 20_000}) is True

    assert await server.claim(subscription, "worker-a") == NO_PENDING_WORK
    await server.append_json(watched, b'{"n":1}')
    grant = await server.claim(subscription, "worker-a")
    assert isinstance(grant, Grant)
    [stream] = grant.streams
    assert stream.path == watched
    assert await server.claim(subscription, "worker-b") == ALREADY_CLAIMED

    await server.renew(subscription, grant)
    await server.release(subscription, grant)
    again = await server.claim(subscription, "worker-b")  # released: announced again
    assert isinstance(again, Grant)
    await server.ack(subscription, again, [(watched, again.streams[0].tail_offset)])
    assert await server.claim(subscription, "worker-a") == NO_PENDING_WORK

    with pytest.raises(UnexpectedStatusError) as stale:
        await server.renew(subscription, again)  # the wake ended with the ack
    assert stale.value.status in (401, 404, 409)

"""StreamServer (the synchronous calls of batch readers) against a real server."""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import httpx
import pytest
from durable_sessions.protocol.offsets import parse_offset
from durable_sessions.protocol.patterns import PatternError, parse_pattern
from durable_sessions.server import ServerUnreachableError, StreamServer
from durable_streams import DurableStreamError, RetentionGoneError, StreamNotFoundError

if TYPE_CHECKING:
    from collections.abc import Iterator

    from conftest import NewStream

MESSAGES = [{"n": 1}, {"n": 2, "text": "two"}, [3]]


@pytest.fixture
def server(server_url: str) -> Iterator[StreamServer]:
    with StreamServer(server_url) as server:
        yield server


def _path(url: str) -> str:
    """``bucket/stream`` of a ``/ds/bucket/stream`` URL."""
    return urlsplit(url).path.removeprefix("/ds/")


def _append(url: str, *messages: object) -> list[int]:
    """Each message in its own POST; the byte position after each."""
    positions = []
    for message in messages:
        response = httpx.post(
            url, content=json.dumps([message]), headers={"Content-Type": "application/json"}
        )
        assert response.status_code in (200, 204), response.text
        positions.append(parse_offset(response.headers["Stream-Next-Offset"]))
    return positions


def test_head_listing_and_find(server: StreamServer, new_stream: NewStream) -> None:
    url = new_stream()
    path = _path(url)
    ends = _append(url, *MESSAGES)
    info = server.head(path)
    assert info is not None
    assert (info.path, info.is_json, info.tail, info.snapshot_offset) == (
        path,
        True,
        ends[-1],
        None,
    )
    assert server.head(path + "-missing") is None

    bucket = path.split("/")[0]
    listed = {info.path: info for info in server.list_bucket(bucket)}
    assert listed[path].tail == ends[-1]
    assert server.list_bucket("no-such-bucket-" + uuid.uuid4().hex[:8]) == []

    assert [info.path for info in server.find(parse_pattern(path))] == [path]
    assert server.find(parse_pattern(path + "-missing")) == []
    assert path in {info.path for info in server.find(parse_pattern(f"{bucket}/*"))}
    with pytest.raises(PatternError):
        server.find(parse_pattern(f"{bucket}/**"))


def test_page_reads_and_boundaries(server: StreamServer, new_stream: NewStream) -> None:
    url = new_stream()
    path = _path(url)
    ends = _append(url, *MESSAGES)
    read = server.read(path, 0)
    assert [json.loads(m) for m in read.messages] == MESSAGES
    assert (read.start, read.next_offset, read.up_to_date) == (0, ends[-1], True)
    tail = server.read(path, ends[0])
    assert [json.loads(m) for m in tail.messages] == MESSAGES[1:]
    assert server.next_boundary(path, 0) == ends[-1]
    with pytest.raises(StreamNotFoundError, match="does not exist \\(404\\)"):
        server.read(path + "-missing", 0)


def test_bootstrap_snapshots_and_retention(server: StreamServer, new_stream: NewStream) -> None:
    url = new_stream()
    path = _path(url)
    ends = _append(url, *MESSAGES)
    with server.bootstrap(path) as boot:
        assert (boot.snapshot, boot.start, boot.next_offset) == (None, 0, ends[-1])
        assert [json.loads(m) for m in boot.messages] == MESSAGES

    assert server.put_snapshot(path, ends[1], b'{"state": 2}') == 204
    assert server.snapshot(path, ends[1]) == b'{"state": 2}'
    info = server.head(path)
    assert info is not None
    assert info.snapshot_offset == ends[1]
    with server.bootstrap(path) as boot:
        assert (boot.snapshot, boot.start, boot.next_offset) == (b'{"state": 2}', ends[1], ends[-1])
        assert [json.loads(m) for m in boot.messages] == MESSAGES[2:]

    with pytest.raises(RetentionGoneError, match="offset before the earliest retained one"):
        server.read(path, 0)
    with pytest.raises(StreamNotFoundError, match="was replaced while reading"):
        server.snapshot(path, ends[0])


def test_bootstrap_refuses_data_that_is_not_json(
    server: StreamServer, new_stream: NewStream
) -> None:
    url = new_stream("text/plain", body=b"plain")
    with (
        pytest.raises(DurableStreamError, match="holds text/plain data, not JSON"),
        server.bootstrap(_path(url)) as boot,
    ):
        list(boot.messages)


def test_deep_paths_have_no_snapshots(server: StreamServer) -> None:
    assert server.extension_url("a/b/c") is None
    with pytest.raises(DurableStreamError, match="in no bucket"):
        server.put_snapshot("a/b/c", 0, b"{}")


def test_an_unreachable_server_is_one_line() -> None:
    with StreamServer("http://127.0.0.1:9") as server, pytest.raises(ServerUnreachableError) as err:
        server.head("x")
    assert err.value.message == "ds-server at http://127.0.0.1:9 is unreachable (ConnectError)"

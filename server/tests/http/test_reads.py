"""GET on stream URLs: catch-up, ETags, offset=now, long-poll and (finite) SSE."""

from __future__ import annotations

import base64
import json
import re
import threading
import time
from typing import TYPE_CHECKING

import pytest
from ds_server.protocol.cursor import current_interval
from ds_server.protocol.sse import KEEPALIVE
from ds_server.settings import ServerSection

if TYPE_CHECKING:
    from collections.abc import Callable

    import httpx

    from conftest import Api

ZERO = "00000000000000000000"
CHUNK = 1024  # read_chunk_bytes of the test apps
LIVE_SECS = 0.2  # long-poll timeout and SSE reconnect interval of the test apps


def offset(position: int) -> str:
    return f"{position:020d}"


def make(api: Api, path: str, body: bytes = b"", **headers: str) -> None:
    response = api.put(path, body, **{"Content_Type": "text/plain", **headers})
    assert response.status_code == 201


def add(api: Api, path: str, body: bytes, content_type: str = "text/plain") -> None:
    assert api.post(path, body, Content_Type=content_type).status_code == 204


def close(api: Api, path: str) -> None:
    assert api.post(path, Stream_Closed="true").status_code == 204


# -- catch-up ----------------------------------------------------------------


def test_catch_up_read(api: Api) -> None:
    make(api, "a", b"hello")
    response = api.get("a")
    assert response.status_code == 200
    assert response.content == b"hello"
    assert response.headers["content-type"] == "text/plain"
    assert response.headers["stream-next-offset"] == offset(5)
    assert response.headers["stream-up-to-date"] == "true"
    assert response.headers["cache-control"].startswith("public")
    assert response.headers["etag"]
    assert "stream-closed" not in response.headers


@pytest.mark.parametrize("query", ["", "offset=-1", f"offset={ZERO}"])
def test_beginning_is_the_default(api: Api, query: str) -> None:
    make(api, "a", b"hello")
    assert api.get("a", query).content == b"hello"


def test_read_from_an_offset(api: Api) -> None:
    make(api, "a", b"hello")
    add(api, "a", b" world")
    response = api.get("a", f"offset={offset(5)}")
    assert response.content == b" world"
    assert response.headers["stream-next-offset"] == offset(11)


def test_read_at_the_tail_is_empty_and_up_to_date(api: Api) -> None:
    make(api, "a", b"hello")
    response = api.get("a", f"offset={offset(5)}")
    assert response.status_code == 200
    assert response.content == b""
    assert response.headers["stream-next-offset"] == offset(5)
    assert response.headers["stream-up-to-date"] == "true"


def test_large_stream_is_read_in_chunks(api: Api) -> None:
    payload = bytes(range(256)) * 13  # 3328 bytes: four reads of at most 1 KiB
    make(api, "a", payload, Content_Type="application/octet-stream")
    got, position, reads = b"", "-1", 0
    while True:
        response = api.get("a", f"offset={position}")
        reads += 1
        assert len(response.content) <= CHUNK
        got += response.content
        position = response.headers["stream-next-offset"]
        if "stream-up-to-date" in response.headers:
            break
        assert response.content
    assert got == payload
    assert reads == 4


def test_closed_stream_final_chunk_and_eof(api: Api) -> None:
    make(api, "a", b"x" * (CHUNK + 10), Stream_Closed="true")
    first = api.get("a")
    assert len(first.content) == CHUNK
    assert "stream-closed" not in first.headers
    assert "stream-up-to-date" not in first.headers
    last = api.get("a", f"offset={first.headers['stream-next-offset']}")
    assert last.content == b"x" * 10
    assert last.headers["stream-closed"] == "true"
    eof = api.get("a", f"offset={offset(CHUNK + 10)}")
    assert (eof.status_code, eof.content) == (200, b"")
    assert eof.headers["stream-closed"] == "true"
    assert eof.headers["stream-up-to-date"] == "true"


@pytest.mark.parametrize(
    "query",
    [
        "offset=",
        "offset=5",
        "offset=abc",
        "offset=-1&offset=-1",
        f"offset={offset(99)}",
        "live=long-poll",
        "live=sse",
        "offset=-1&live=poll",
    ],
)
def test_bad_read_queries_are_400(api: Api, query: str) -> None:
    make(api, "a", b"hello")
    assert api.get("a", query).status_code == 400


def test_read_missing_stream(api: Api) -> None:
    assert api.get("nope").status_code == 404
    assert api.get("nope", "offset=now&live=long-poll").status_code == 404
    assert api.get("nope", "offset=now&live=sse").status_code == 404


# -- JSON --------------------------------------------------------------------


def test_json_read_is_an_array_of_messages(api: Api) -> None:
    make(api, "j", b'[1, {"a": 2}]', Content_Type="application/json")
    add(api, "j", b'"three"', "application/json")
    response = api.get("j")
    assert response.headers["content-type"] == "application/json"
    assert response.content == b'[1,{"a": 2},"three"]'
    assert json.loads(response.content) == [1, {"a": 2}, "three"]


def test_json_read_from_a_message_boundary(api: Api) -> None:
    make(api, "j", b'[1, {"a": 2}]', Content_Type="application/json")
    assert api.get("j", f"offset={offset(1)}").content == b'[{"a": 2}]'
    assert api.get("j", f"offset={offset(2)}").status_code == 400


def test_json_read_at_tail_is_empty_array(api: Api) -> None:
    make(api, "j", b"[1]", Content_Type="application/json")
    assert api.get("j", f"offset={offset(1)}").content == b"[]"


# -- ETag --------------------------------------------------------------------


def test_if_none_match_gives_304(api: Api) -> None:
    make(api, "a", b"hello")
    etag = api.get("a").headers["etag"]
    response = api.get("a", If_None_Match=etag)
    assert response.status_code == 304
    assert response.content == b""
    assert response.headers["etag"] == etag


def test_etag_changes_with_new_data(api: Api) -> None:
    make(api, "a", b"hello")
    etag = api.get("a").headers["etag"]
    add(api, "a", b"!")
    response = api.get("a", If_None_Match=etag)
    assert response.status_code == 200
    assert response.headers["etag"] != etag


def test_etag_changes_when_the_stream_closes(api: Api) -> None:
    make(api, "a", b"hello")
    at_tail = f"offset={offset(5)}"
    etag = api.get("a", at_tail).headers["etag"]
    close(api, "a")
    response = api.get("a", at_tail, If_None_Match=etag)
    assert response.status_code == 200
    assert response.headers["stream-closed"] == "true"
    assert response.headers["etag"] != etag


def test_etag_differs_for_a_recreated_stream(api: Api) -> None:
    make(api, "a", b"hello")
    etag = api.get("a").headers["etag"]
    api.delete("a")
    make(api, "a", b"hello")
    assert api.get("a", If_None_Match=etag).status_code == 200


# -- offset=now --------------------------------------------------------------


def test_offset_now(api: Api) -> None:
    make(api, "a", b"hello")
    response = api.get("a", "offset=now")
    assert response.status_code == 200
    assert response.content == b""
    assert response.headers["stream-next-offset"] == offset(5)
    assert response.headers["stream-up-to-date"] == "true"
    assert response.headers["cache-control"] == "no-store"
    assert "etag" not in response.headers


def test_offset_now_json_is_empty_array(api: Api) -> None:
    make(api, "j", b"[1,2]", Content_Type="application/json")
    assert api.get("j", "offset=now").content == b"[]"


def test_offset_now_on_closed_stream(api: Api) -> None:
    make(api, "a", b"hello", Stream_Closed="true")
    response = api.get("a", "offset=now")
    assert response.headers["stream-closed"] == "true"
    assert response.headers["stream-up-to-date"] == "true"
    assert response.headers["stream-next-offset"] == offset(5)


# -- long-poll ---------------------------------------------------------------


def _cursor_ok(cursor: str) -> None:
    assert re.fullmatch(r"[0-9]+", cursor)
    assert int(cursor) >= current_interval() - 1


def test_long_poll_times_out_with_204_and_cursor(api: Api) -> None:
    make(api, "a", b"hello")
    started = time.monotonic()
    response = api.get("a", f"offset={offset(5)}&live=long-poll")
    assert time.monotonic() - started >= LIVE_SECS * 0.9
    assert response.status_code == 204
    assert response.headers["stream-next-offset"] == offset(5)
    assert response.headers["stream-up-to-date"] == "true"
    _cursor_ok(response.headers["stream-cursor"])
    assert "stream-closed" not in response.headers


def test_long_poll_with_data_returns_at_once(api: Api) -> None:
    make(api, "a", b"hello")
    response = api.get("a", "offset=-1&live=long-poll")
    assert response.status_code == 200
    assert response.content == b"hello"
    _cursor_ok(response.headers["stream-cursor"])


def test_long_poll_echoed_current_cursor_is_bumped(api: Api) -> None:
    make(api, "a")
    echoed = current_interval() + 1000
    response = api.get("a", f"cursor={echoed}&live=long-poll&offset=now")
    assert int(response.headers["stream-cursor"]) > echoed


def test_long_poll_wakes_on_append(make_api: Callable[..., Api]) -> None:
    api = make_api(server=ServerSection(long_poll_timeout_secs=10, read_chunk_bytes=CHUNK))
    make(api, "a", b"old")
    results: list[httpx.Response] = []
    poller = threading.Thread(
        target=lambda: results.append(api.get("a", "offset=now&live=long-poll"))
    )
    started = time.monotonic()
    poller.start()
    time.sleep(0.2)
    add(api, "a", b"new")
    poller.join(timeout=10)
    assert time.monotonic() - started < 5
    (response,) = results
    assert response.status_code == 200
    assert response.content == b"new"
    assert response.headers["stream-next-offset"] == offset(6)


def test_long_poll_on_closed_stream_returns_immediately(
    make_api: Callable[..., Api],
) -> None:
    api = make_api(server=ServerSection(long_poll_timeout_secs=10, read_chunk_bytes=CHUNK))
    make(api, "a", b"hello", Stream_Closed="true")
    for query in (f"offset={offset(5)}&live=long-poll", "offset=now&live=long-poll"):
        started = time.monotonic()
        response = api.get("a", query)
        assert time.monotonic() - started < 2
        assert response.status_code == 204
        assert response.headers["stream-closed"] == "true"
        assert response.headers["stream-up-to-date"] == "true"
        assert response.headers["stream-next-offset"] == offset(5)


def test_long_poll_wakes_on_close(make_api: Callable[..., Api]) -> None:
    api = make_api(server=ServerSection(long_poll_timeout_secs=10, read_chunk_bytes=CHUNK))
    make(api, "a", b"hello")
    results: list[httpx.Response] = []
    poller = threading.Thread(
        target=lambda: results.append(api.get("a", "offset=now&live=long-poll"))
    )
    poller.start()
    time.sleep(0.2)
    close(api, "a")
    poller.join(timeout=10)
    (response,) = results
    assert response.status_code == 204
    assert response.headers["stream-closed"] == "true"


def test_long_poll_json(api: Api) -> None:
    make(api, "j", b"[1,2]", Content_Type="application/json")
    response = api.get("j", "offset=-1&live=long-poll")
    assert response.content == b"[1,2]"


# -- SSE (finite: closed streams, or the short reconnect interval) ------------


def sse_events(raw: bytes) -> list[tuple[str, str]]:
    """``(event, data)`` pairs of an event stream (the framing is tested in unit/test_sse.py)."""
    events = []
    for block in raw.decode().split("\n\n"):
        lines = [line for line in block.split("\n") if line and not line.startswith(":")]
        if not lines:
            continue
        kind = next(line[6:].strip() for line in lines if line.startswith("event:"))
        data = "\n".join(line[5:] for line in lines if line.startswith("data:"))
        events.append((kind, data))
    return events


def test_sse_on_closed_text_stream(api: Api) -> None:
    make(api, "a", b"line one\nline two", Stream_Closed="true")
    response = api.get("a", "offset=-1&live=sse")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert "stream-sse-data-encoding" not in response.headers
    events = sse_events(response.content)
    assert events[0] == ("data", "line one\nline two")
    kind, data = events[1]
    assert kind == "control"
    assert json.loads(data) == {
        "streamNextOffset": offset(17),
        "upToDate": True,
        "streamClosed": True,
    }
    assert len(events) == 2


def test_sse_binary_stream_is_base64(api: Api) -> None:
    payload = bytes(range(256))
    make(api, "b", payload, Content_Type="application/octet-stream", Stream_Closed="true")
    response = api.get("b", "offset=-1&live=sse")
    assert response.headers["stream-sse-data-encoding"] == "base64"
    kind, data = sse_events(response.content)[0]
    assert kind == "data"
    assert base64.b64decode(data.replace("\n", "")) == payload


def test_sse_json_stream_sends_arrays(api: Api) -> None:
    make(api, "j", b'[1, {"a": 2}]', Content_Type="application/json", Stream_Closed="true")
    kind, data = sse_events(api.get("j", "offset=-1&live=sse").content)[0]
    assert kind == "data"
    assert json.loads(data) == [1, {"a": 2}]


def test_sse_now_on_closed_stream_is_one_control_event(api: Api) -> None:
    make(api, "a", b"hello", Stream_Closed="true")
    events = sse_events(api.get("a", "offset=now&live=sse").content)
    assert len(events) == 1
    kind, data = events[0]
    assert kind == "control"
    assert json.loads(data)["streamClosed"] is True


def test_idle_sse_connection_gets_keepalive_comments(make_api: Callable[..., Api]) -> None:
    api = make_api(
        server=ServerSection(
            sse_keepalive_secs=0.05, sse_reconnect_interval_secs=0.5, read_chunk_bytes=1024
        )
    )
    make(api, "a", b"hello")
    raw = api.get("a", "offset=-1&live=sse").content
    assert sse_events(raw)[0] == ("data", "hello")
    # About ten periods pass before the reconnect interval ends the response.
    assert raw.count(KEEPALIVE) >= 3


def test_sse_on_a_busy_stream_still_ends_at_reconnect_interval(api: Api) -> None:
    make(api, "a", b"0")
    writing = threading.Event()
    writing.set()

    def keep_appending() -> None:
        while writing.is_set():
            add(api, "a", b"1")
            time.sleep(0.005)

    writer = threading.Thread(target=keep_appending)
    writer.start()
    try:
        started = time.monotonic()
        response = api.get("a", "offset=-1&live=sse")
        elapsed = time.monotonic() - started
    finally:
        writing.clear()
        writer.join(timeout=10)
    # The app's reconnect interval is 0.2 s; the writer appends throughout, and
    # what was delivered matches the offset the last control event gives.
    assert elapsed < 5
    events = sse_events(response.content)
    assert events[-1][0] == "control"
    delivered = "".join(data for kind, data in events if kind == "data")
    assert delivered.startswith("01")
    assert json.loads(events[-1][1])["streamNextOffset"] == offset(len(delivered))


def test_sse_open_stream_ends_at_reconnect_interval(api: Api) -> None:
    make(api, "a", b"hello")
    started = time.monotonic()
    response = api.get("a", "offset=-1&live=sse&cursor=1")
    assert time.monotonic() - started < 5
    events = sse_events(response.content)
    assert events[0] == ("data", "hello")
    control = json.loads(events[1][1])
    assert control["streamNextOffset"] == offset(5)
    assert control["upToDate"] is True
    _cursor_ok(control["streamCursor"])
    assert "streamClosed" not in control

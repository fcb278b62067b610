"""Extensions 3: GET {stream}/bootstrap, parsed with the standard library's MIME parser."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

import httpx
import pytest
from ext_helpers import (
    JSON_TYPE,
    OCTET,
    READ_CHUNK_BYTES,
    offset,
    parse_bootstrap,
    sse_events,
    up_to_date,
)

if TYPE_CHECKING:
    from ext_helpers import Bucket

MESSAGES = [
    {"op": "set", "path": ["title"], "value": "hello"},
    {"op": "insert", "path": ["body", 0], "value": "world"},
    {"op": "noop"},
]


def _message_bytes(message: object) -> bytes:
    return json.dumps(message).encode()


def test_headers(bucket: Bucket) -> None:
    bucket.create_stream("s", content_type=JSON_TYPE)
    tail = bucket.append_json("s", *MESSAGES)[-1]
    response = bucket.bootstrap("s")
    assert response.status_code == 200
    content_type = response.headers["Content-Type"]
    assert content_type.startswith("multipart/mixed;")
    assert "boundary=" in content_type
    assert response.headers["Stream-Snapshot-Offset"] == "-1"
    assert response.headers["Stream-Next-Offset"] == tail
    assert response.headers["Stream-Up-To-Date"] == "true"
    assert response.headers["Cache-Control"] == "no-store"


def test_without_a_snapshot_the_first_part_is_empty_octet_stream(bucket: Bucket) -> None:
    bucket.create_stream("s", content_type=JSON_TYPE)
    bucket.append_json("s", *MESSAGES)
    parts = parse_bootstrap(bucket.bootstrap("s"))
    assert (parts[0].content_type, parts[0].body) == (OCTET, b"")
    # Updates begin at the earliest retained offset: the start of the stream.
    assert [part.body for part in parts[1:]] == [_message_bytes(m) for m in MESSAGES]
    assert all(part.content_type == JSON_TYPE for part in parts[1:])


def test_with_a_snapshot_the_first_part_is_the_snapshot(bucket: Bucket) -> None:
    bucket.create_stream("s", content_type=JSON_TYPE)
    offsets = bucket.append_json("s", *MESSAGES)
    blob = bytes(range(256)) * 4
    assert bucket.publish("s", offsets[0], blob, "application/x-crdt").status_code == 204
    response = bucket.bootstrap("s")
    assert response.headers["Stream-Snapshot-Offset"] == offsets[0]
    assert response.headers["Stream-Next-Offset"] == offsets[-1]
    parts = parse_bootstrap(response)
    assert (parts[0].content_type, parts[0].body) == ("application/x-crdt", blob)
    assert [part.body for part in parts[1:]] == [_message_bytes(m) for m in MESSAGES[1:]]


def test_snapshot_at_the_tail_has_no_update_parts(bucket: Bucket) -> None:
    bucket.create_stream("s", content_type=JSON_TYPE)
    tail = bucket.append_json("s", *MESSAGES)[-1]
    assert bucket.publish("s", tail, b"everything").status_code == 204
    response = bucket.bootstrap("s")
    assert [part.body for part in parse_bootstrap(response)] == [b"everything"]
    assert response.headers["Stream-Next-Offset"] == tail


def test_empty_stream(bucket: Bucket) -> None:
    bucket.create_stream("s")
    response = bucket.bootstrap("s")
    parts = parse_bootstrap(response)
    assert [(p.content_type, p.body) for p in parts] == [(OCTET, b"")]
    assert response.headers["Stream-Next-Offset"] == offset(0)


def test_update_parts_carry_the_stream_content_type(bucket: Bucket) -> None:
    content_type = "text/plain; charset=utf-8"
    bucket.create_stream("s", content_type=content_type)
    for text in (b"one", b"two"):
        bucket.append("s", text, content_type=content_type)
    parts = parse_bootstrap(bucket.bootstrap("s"))
    assert [(p.content_type, p.body) for p in parts[1:]] == [
        (content_type, b"one"),
        (content_type, b"two"),
    ]


BINARY_PAYLOADS = [
    bytes(range(256)),
    b"\r\n",
    b"ends with CR\r",
    b"\n\n--\r\n--boundary-lookalike--\r\n",
    b"",  # never stored: empty appends are refused; kept out below
    os.urandom(3 * READ_CHUNK_BYTES + 17),  # larger than a read page
    b"Content-Type: text/html\r\n\r\n<p>not a header</p>",
]


def test_binary_messages_are_parts_byte_for_byte(bucket: Bucket) -> None:
    payloads = [p for p in BINARY_PAYLOADS if p]
    bucket.create_stream("s", content_type=OCTET)
    for payload in payloads:
        bucket.append("s", payload)
    parts = parse_bootstrap(bucket.bootstrap("s"))
    # One part per append, neither merged nor split, never re-encoded.
    assert [part.body for part in parts[1:]] == payloads
    assert all(part.content_type == OCTET for part in parts[1:])
    # The same bytes, at the same boundaries, as ordinary reads.
    assert b"".join(part.body for part in parts[1:]) == bucket.read_all("s")[0]


def test_json_parts_match_ordinary_reads(bucket: Bucket) -> None:
    bucket.create_stream("s", content_type=JSON_TYPE)
    bucket.append("s", b'[{"a": 1}, {"b": [1, 2]}, "text", 4.50]', content_type=JSON_TYPE)
    parts = parse_bootstrap(bucket.bootstrap("s"))
    assert [part.body for part in parts[1:]] == [b'{"a": 1}', b'{"b": [1, 2]}', b'"text"', b"4.50"]
    assert [json.loads(part.body) for part in parts[1:]] == bucket.read_json("s")[0]


def test_many_messages_span_several_pages(bucket: Bucket) -> None:
    bucket.create_stream("s", content_type=JSON_TYPE)
    messages = [{"n": n, "pad": "x" * 50} for n in range(300)]
    for start in range(0, len(messages), 50):
        batch = json.dumps(messages[start : start + 50]).encode()
        bucket.append("s", batch, content_type=JSON_TYPE)
    parts = parse_bootstrap(bucket.bootstrap("s"))
    assert [json.loads(part.body) for part in parts[1:]] == messages


@pytest.mark.parametrize("live", ["sse", "long-poll", "", "true"])
def test_live_parameter_is_400(bucket: Bucket, live: str) -> None:
    bucket.create_stream("s", body=b"abc")
    assert bucket.bootstrap("s", live=live).status_code == 400


def test_missing_stream_is_404(bucket: Bucket) -> None:
    assert bucket.bootstrap("missing").status_code == 404


def test_long_poll_from_next_offset_continues_exactly(bucket: Bucket) -> None:
    bucket.create_stream("s", content_type=JSON_TYPE)
    offsets = bucket.append_json("s", *MESSAGES)
    assert bucket.publish("s", offsets[0], b"snap").status_code == 204
    response = bucket.bootstrap("s")
    next_offset = response.headers["Stream-Next-Offset"]
    # Nothing new yet: the long-poll times out at the same offset.
    waited = bucket.read("s", next_offset, live="long-poll")
    assert waited.status_code == 204
    assert waited.headers["Stream-Next-Offset"] == next_offset
    bucket.append_json("s", {"after": 1}, {"after": 2})
    live = bucket.read("s", next_offset, live="long-poll")
    assert live.status_code == 200
    assert live.json() == [{"after": 1}, {"after": 2}]


def test_sse_from_next_offset_continues_exactly(bucket: Bucket) -> None:
    bucket.create_stream("s", content_type=JSON_TYPE)
    bucket.append_json("s", *MESSAGES)
    next_offset = bucket.bootstrap("s").headers["Stream-Next-Offset"]
    bucket.append_json("s", {"after": 1})
    _, events = sse_events(bucket.http, bucket.path("s"), next_offset, until=up_to_date)
    assert [json.loads(e.data) for e in events if e.event == "data"] == [[{"after": 1}]]


def test_closed_stream_bootstraps_then_reports_closure(bucket: Bucket) -> None:
    bucket.create_stream("s", content_type="text/plain", body=b"last words")
    closed = bucket.http.post(bucket.path("s"), headers={"Stream-Closed": "true"})
    assert closed.status_code == 204
    response = bucket.bootstrap("s")
    assert [part.body for part in parse_bootstrap(response)[1:]] == [b"last words"]
    follow = bucket.read("s", response.headers["Stream-Next-Offset"], live="long-poll")
    assert follow.status_code == 204
    assert follow.headers["Stream-Closed"] == "true"


def test_bootstrap_ends_at_the_tail_as_of_the_request(bucket: Bucket) -> None:
    bucket.create_stream("s", content_type=OCTET)
    for n in range(20):
        bucket.append("s", b"%d" % n)
    response = bucket.bootstrap("s")
    parts = parse_bootstrap(response)
    end = sum(len(part.body) for part in parts[1:])
    assert response.headers["Stream-Next-Offset"] == offset(end)


def test_a_publish_during_a_bootstrap_leaves_it_complete(bucket: Bucket) -> None:
    """A bootstrap under way answers with what the stream held when it began."""
    bucket.create_stream("s", content_type=OCTET)
    appends = [os.urandom(64 * 1024) for _ in range(100)]
    offsets = [bucket.append("s", data) for data in appends]
    received = b""
    with bucket.http.stream("GET", bucket.path("s", "/bootstrap")) as response:
        assert response.status_code == 200
        chunks = response.iter_raw()
        while len(received) < 64 * 1024:
            received += next(chunks)
        # The client is still reading the start; the stream's retention moves past it all.
        assert bucket.publish("s", offsets[-1], b"everything").status_code == 204
        for chunk in chunks:
            received += chunk
        headers = response.headers
    complete = httpx.Response(200, headers=headers, content=received)
    assert [part.body for part in parse_bootstrap(complete)[1:]] == appends

"""Extensions 1.6 and 4: every base-protocol operation under /ds/{bucket}/{stream}."""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from typing import TYPE_CHECKING

import httpx
import pytest
from ext_helpers import JSON_TYPE, OCTET, new_bucket_id, offset, sse_events, up_to_date

if TYPE_CHECKING:
    from ext_helpers import Backend, Bucket


def test_put_creates_with_location_and_is_idempotent(bucket: Bucket, server: Backend) -> None:
    response = bucket.http.put(
        bucket.path("s"), content=b"abc", headers={"Content-Type": "text/plain"}
    )
    assert response.status_code == 201
    assert response.headers["Location"] == f"{server.url}/ds/{bucket.id}/s"
    assert response.headers["Stream-Next-Offset"] == offset(3)
    same = bucket.http.put(bucket.path("s"), headers={"Content-Type": "text/plain"})
    assert same.status_code == 200
    other = bucket.http.put(bucket.path("s"), headers={"Content-Type": JSON_TYPE})
    assert other.status_code == 409


def test_post_appends_and_closes(bucket: Bucket) -> None:
    bucket.create_stream("s", content_type="text/plain")
    response = bucket.http.post(
        bucket.path("s"), content=b"hello", headers={"Content-Type": "text/plain"}
    )
    assert response.status_code == 204
    assert response.headers["Stream-Next-Offset"] == offset(5)
    closed = bucket.http.post(bucket.path("s"), headers={"Stream-Closed": "true"})
    assert closed.status_code == 204
    assert closed.headers["Stream-Closed"] == "true"
    refused = bucket.http.post(
        bucket.path("s"), content=b"more", headers={"Content-Type": "text/plain"}
    )
    assert refused.status_code == 409


def test_idempotent_producer_under_ds(bucket: Bucket) -> None:
    bucket.create_stream("s", content_type="text/plain")
    producer = {"Producer-Id": "p", "Producer-Epoch": "0", "Producer-Seq": "0"}
    headers = {"Content-Type": "text/plain", **producer}
    first = bucket.http.post(bucket.path("s"), content=b"once", headers=headers)
    assert first.status_code == 200
    again = bucket.http.post(bucket.path("s"), content=b"once", headers=headers)
    assert again.status_code == 204
    assert again.headers["Stream-Next-Offset"] == offset(4)
    assert bucket.read_all("s") == (b"once", offset(4))


def test_catch_up_read(bucket: Bucket) -> None:
    bucket.create_stream("s", content_type=JSON_TYPE)
    bucket.append_json("s", {"n": 1}, {"n": 2})
    response = bucket.read("s", "-1")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == JSON_TYPE
    assert response.json() == [{"n": 1}, {"n": 2}]
    assert response.headers["Stream-Up-To-Date"] == "true"
    assert "ETag" in response.headers


def test_long_poll_returns_new_data_or_204(bucket: Bucket) -> None:
    bucket.create_stream("s", content_type="text/plain")
    tail = bucket.append("s", b"a", content_type="text/plain")
    timed_out = bucket.read("s", tail, live="long-poll")
    assert timed_out.status_code == 204
    assert timed_out.headers["Stream-Next-Offset"] == tail

    def append_soon() -> None:
        time.sleep(0.1)
        bucket.append("s", b"b", content_type="text/plain")

    writer = threading.Thread(target=append_soon)
    writer.start()
    try:
        with httpx.Client(base_url=str(bucket.http.base_url), timeout=30.0) as reader:
            response = reader.get(bucket.path("s"), params={"offset": tail, "live": "long-poll"})
    finally:
        writer.join()
    assert response.status_code == 200
    assert response.content == b"b"
    assert response.headers["Stream-Next-Offset"] == offset(2)
    assert "Stream-Cursor" in response.headers


def test_sse_read_pairs_data_with_control(bucket: Bucket) -> None:
    bucket.create_stream("s", content_type=JSON_TYPE)
    bucket.append_json("s", {"n": 1})
    headers, events = sse_events(bucket.http, bucket.path("s"), "-1", until=up_to_date)
    assert headers["Content-Type"].startswith("text/event-stream")
    assert [event.event for event in events] == ["data", "control"]
    assert events[0].data == '[{"n": 1}]'
    control = events[1].control()
    assert control["streamNextOffset"] == offset(len(b'{"n": 1}'))
    assert control["upToDate"] is True


def test_binary_sse_is_base64_with_the_encoding_header(bucket: Bucket) -> None:
    payload = bytes(range(256))
    bucket.create_stream("bin", content_type=OCTET, body=payload)
    headers, events = sse_events(bucket.http, bucket.path("bin"), "-1", until=up_to_date)
    assert headers["stream-sse-data-encoding"] == "base64"
    data = b"".join(base64.b64decode(e.data.replace("\n", "")) for e in events if e.event == "data")
    assert data == payload


def test_binary_sse_frames_are_those_of_the_base_surface(bucket: Bucket) -> None:
    bucket.create_stream("bin", content_type=OCTET, body=b"\x00\xff" * 3000)
    _, on_ds = sse_events(bucket.http, bucket.path("bin"), "-1", until=up_to_date)
    _, on_base = sse_events(bucket.http, f"/v1/stream/{bucket.id}/bin", "-1", until=up_to_date)
    assert [e for e in on_ds if e.event == "data"] == [e for e in on_base if e.event == "data"]


def test_head_reports_metadata(bucket: Bucket) -> None:
    bucket.create_stream("s", content_type="text/plain", body=b"abcd")
    response = bucket.http.head(bucket.path("s"))
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/plain"
    assert response.headers["Stream-Next-Offset"] == offset(4)
    assert "Stream-Snapshot-Offset" not in response.headers


def test_delete_removes_the_stream(bucket: Bucket) -> None:
    bucket.create_stream("s", body=b"x")
    assert bucket.http.delete(bucket.path("s")).status_code == 204
    assert bucket.read("s", "-1").status_code == 404
    assert bucket.http.head(bucket.path("s")).status_code == 404
    assert bucket.http.delete(bucket.path("s")).status_code == 404


def test_a_ds_stream_is_the_base_surface_stream(bucket: Bucket) -> None:
    bucket.create_stream("s", content_type="text/plain", body=b"from-ds")
    response = bucket.http.get(f"/v1/stream/{bucket.id}/s", params={"offset": "-1"})
    assert response.content == b"from-ds"


OPERATIONS = [
    ("PUT", ""),
    ("POST", ""),
    ("GET", ""),
    ("HEAD", ""),
    ("DELETE", ""),
    ("GET", "/bootstrap"),
    ("GET", "/snapshot"),
    ("GET", "/snapshot/00000000000000000000"),
    ("PUT", "/snapshot/00000000000000000000"),
    ("DELETE", "/snapshot/00000000000000000000"),
]


@pytest.mark.parametrize(("method", "suffix"), OPERATIONS)
def test_every_operation_in_a_missing_bucket_is_404(
    http: httpx.Client, method: str, suffix: str
) -> None:
    bucket_id = new_bucket_id()
    # The same stream exists on the base surface: the bucket's absence alone decides.
    assert http.put(f"/v1/stream/{bucket_id}/s", content=b"x").status_code == 201
    response = http.request(
        method,
        f"/ds/{bucket_id}/s{suffix}",
        params={"offset": "-1"} if method == "GET" and not suffix else None,
        content=b"x" if method in ("PUT", "POST") else None,
        headers={"Content-Type": OCTET},
    )
    assert response.status_code == 404


@pytest.mark.parametrize("live", ["long-poll", "sse"])
def test_live_reads_in_a_missing_bucket_are_404(http: httpx.Client, live: str) -> None:
    response = http.get(f"/ds/{new_bucket_id()}/s", params={"offset": "-1", "live": live})
    assert response.status_code == 404


def test_large_bodies_are_stored_byte_exact(bucket: Bucket) -> None:
    # Over a real socket a body this size reaches the app in many parts (the
    # server's flow control hands over ~64 KiB at a time); each append is still
    # one message, and every read sees one seamless sequence.
    first = os.urandom(3 * 1024 * 1024 + 17)
    second = os.urandom(1024 * 1024 + 5)
    bucket.create_stream("big", body=first[:1000])
    assert bucket.append("big", first[1000:]) == offset(len(first))
    assert bucket.append("big", second) == offset(len(first) + len(second))
    assert bucket.read_all("big") == (first + second, offset(len(first) + len(second)))
    # From inside a part, and across the seam between the two appends.
    middle = len(first) - 70_000
    assert bucket.read_all("big", offset(middle))[0] == (first + second)[middle:]


def test_large_json_bodies_keep_their_messages(bucket: Bucket) -> None:
    messages = [{"n": n, "pad": "x" * 1000} for n in range(3000)]  # ~3 MiB in one body
    bucket.create_stream("j", content_type=JSON_TYPE)
    response = bucket.http.post(
        bucket.path("j"), content=json.dumps(messages).encode(), headers={"Content-Type": JSON_TYPE}
    )
    assert response.status_code == 204, response.text
    assert bucket.read_json("j")[0] == messages

"""Extensions 1.4: GET /ds/{bucket}/streams, its body, filtering and paging."""

from __future__ import annotations

import asyncio
import random
import time
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from ext_helpers import Bucket, new_bucket_id

if TYPE_CHECKING:
    from ext_helpers import Backend

LISTING_FIELDS = {"bucket_id", "prefix", "stream_count", "streams", "next_cursor", "has_more"}
ROW_FIELDS = {
    "stream_id",
    "status",
    "content_type",
    "tail_offset",
    "created_at_ms",
    "last_write_at_ms",
}


def listing(bucket: Bucket, **params: str) -> dict[str, Any]:
    response = bucket.http.get(f"/ds/{bucket.id}/streams", params=params)
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"].startswith("application/json")
    body: dict[str, Any] = response.json()
    return body


def test_listing_body_is_exactly_as_documented(bucket: Bucket) -> None:
    before_ms = int(time.time() * 1000) - 1000
    bucket.create_stream("user-1", content_type="text/plain", body=b"0123456789")
    bucket.create_stream("user-2", content_type="application/json", body=b'[{"a":1}]')
    body = listing(bucket, prefix="user-", limit="1")
    assert set(body) == LISTING_FIELDS
    assert body["bucket_id"] == bucket.id
    assert body["prefix"] == "user-"
    assert body["stream_count"] == 1
    assert body["next_cursor"] == "user-1"
    assert body["has_more"] is True
    [row] = body["streams"]
    assert set(row) == ROW_FIELDS
    assert row["stream_id"] == "user-1"
    assert row["status"] == "Open"
    assert row["content_type"] == "text/plain"
    assert type(row["tail_offset"]) is int
    assert row["tail_offset"] == 10
    assert type(row["created_at_ms"]) is int
    assert type(row["last_write_at_ms"]) is int
    assert before_ms <= row["created_at_ms"] <= row["last_write_at_ms"]
    assert row["last_write_at_ms"] <= int(time.time() * 1000) + 1000


def test_row_values_follow_the_stream(bucket: Bucket) -> None:
    bucket.create_stream("s", content_type="text/plain")
    [created] = listing(bucket)["streams"]
    assert created["tail_offset"] == 0
    time.sleep(0.01)
    next_offset = bucket.append("s", b"hello", content_type="text/plain")
    closed = bucket.http.post(bucket.path("s"), headers={"Stream-Closed": "true"})
    assert closed.status_code == 204
    [row] = listing(bucket)["streams"]
    assert row["tail_offset"] == int(next_offset) == 5
    assert row["status"] == "Closed"
    assert row["created_at_ms"] == created["created_at_ms"]
    assert row["last_write_at_ms"] > created["created_at_ms"]


def test_tail_offset_matches_stream_next_offset(bucket: Bucket) -> None:
    bucket.create_stream("s")
    tail = bucket.append("s", b"x" * 1234)
    assert listing(bucket)["streams"][0]["tail_offset"] == int(tail)
    head = bucket.http.head(bucket.path("s"))
    assert int(head.headers["Stream-Next-Offset"]) == int(tail)


def test_streams_are_sorted_lexicographically(bucket: Bucket) -> None:
    ids = ["b", "a", "ab", "B", "a-1", "a_1", "z", "é", "0", "aa"]
    shuffled = ids[:]
    random.shuffle(shuffled)
    for stream in shuffled:
        bucket.create_stream(stream)
    body = listing(bucket)
    assert [row["stream_id"] for row in body["streams"]] == sorted(ids)
    assert body["stream_count"] == len(ids)
    assert body["has_more"] is False
    assert body["next_cursor"] is None


def test_prefix_filters_and_is_optional(bucket: Bucket) -> None:
    for stream in ("user-1", "user-2", "users", "admin", "user-10"):
        bucket.create_stream(stream)
    body = listing(bucket, prefix="user-")
    assert [row["stream_id"] for row in body["streams"]] == ["user-1", "user-10", "user-2"]
    assert body["prefix"] == "user-"
    everything = listing(bucket)
    assert len(everything["streams"]) == 5
    assert everything["prefix"] == ""
    assert listing(bucket, prefix="nobody")["streams"] == []


def test_after_is_an_exclusive_cursor(bucket: Bucket) -> None:
    for stream in ("a", "b", "c", "d"):
        bucket.create_stream(stream)
    assert [row["stream_id"] for row in listing(bucket, after="b")["streams"]] == ["c", "d"]
    # A cursor need not name an existing stream.
    assert [row["stream_id"] for row in listing(bucket, after="bb")["streams"]] == ["c", "d"]
    assert listing(bucket, after="d")["streams"] == []
    prefixed = listing(bucket, after="a", prefix="c")
    assert [row["stream_id"] for row in prefixed["streams"]] == ["c"]


def test_paging_walk_with_next_cursor_visits_every_stream_once(bucket: Bucket) -> None:
    ids = sorted(f"s-{index:02d}" for index in range(7))
    for stream in ids:
        bucket.create_stream(stream)
    bucket.create_stream("other")
    seen: list[str] = []
    params = {"limit": "3", "prefix": "s-"}
    pages = 0
    while True:
        body = listing(bucket, **params)
        pages += 1
        rows = [row["stream_id"] for row in body["streams"]]
        seen.extend(rows)
        assert body["stream_count"] == len(rows)
        if not body["has_more"]:
            assert body["next_cursor"] is None
            break
        assert len(rows) == 3
        assert body["next_cursor"] == rows[-1]
        params["after"] = body["next_cursor"]
    assert seen == ids
    assert pages == 3


def test_limit_bounds_are_1_and_1000(bucket: Bucket) -> None:
    bucket.create_stream("a")
    bucket.create_stream("b")
    assert len(listing(bucket, limit="1")["streams"]) == 1
    assert len(listing(bucket, limit="1000")["streams"]) == 2
    for bad in ("0", "1001", "-1", "abc", "", "1.5", " 5", "99999999999999999999"):
        response = bucket.http.get(f"/ds/{bucket.id}/streams", params={"limit": bad})
        assert response.status_code == 400, bad


def test_listing_of_invalid_or_missing_bucket(http: httpx.Client) -> None:
    assert http.get("/ds/NOPE/streams").status_code == 400
    assert http.get(f"/ds/{new_bucket_id()}/streams").status_code == 404


def test_listing_leaves_out_deeper_paths_of_the_base_surface(bucket: Bucket) -> None:
    bucket.create_stream("a")
    # /v1/stream/{bucket}/x/y is a stream, but "x/y" is no bucket-local stream id.
    assert bucket.http.put(f"/v1/stream/{bucket.id}/x/y").status_code == 201
    assert [row["stream_id"] for row in listing(bucket)["streams"]] == ["a"]
    assert bucket.http.get(f"/ds/{bucket.id}").json()["streams"] == 1


async def _create_many(url: str, bucket_id: str, count: int) -> None:
    limits = httpx.Limits(max_connections=32)
    async with httpx.AsyncClient(base_url=url, timeout=60.0, limits=limits) as client:
        gate = asyncio.Semaphore(32)

        async def create(index: int) -> None:
            async with gate:
                response = await client.put(f"/ds/{bucket_id}/s{index:04d}")
                assert response.status_code == 201, response.text

        await asyncio.gather(*(create(index) for index in range(count)))


@pytest.mark.timeout(600)
def test_limit_defaults_to_1000(server: Backend, bucket: Bucket) -> None:
    asyncio.run(_create_many(server.url, bucket.id, 1001))
    first = listing(bucket)
    assert len(first["streams"]) == 1000
    assert first["stream_count"] == 1000
    assert first["has_more"] is True
    assert first["next_cursor"] == "s0999"
    rest = listing(bucket, after=first["next_cursor"])
    assert [row["stream_id"] for row in rest["streams"]] == ["s1000"]
    assert rest["has_more"] is False


def test_streams_the_ds_surface_cannot_address_are_not_its_streams(bucket: Bucket) -> None:
    # Made through /v1/stream: "streams" is the listing's name on /ds, and
    # "x..y" is no stream id; /ds neither lists nor counts them.
    for stream_id in ("streams", "x..y"):
        created = bucket.http.put(f"/v1/stream/{bucket.id}/{stream_id}")
        assert created.status_code == 201, created.text
    bucket.create_stream("a")
    body = listing(bucket)
    assert [row["stream_id"] for row in body["streams"]] == ["a"]
    assert bucket.http.get(f"/ds/{bucket.id}").json()["streams"] == 1


@pytest.mark.parametrize("method", ["PUT", "POST", "HEAD", "DELETE"])
def test_the_listing_name_is_no_stream(bucket: Bucket, method: str) -> None:
    response = bucket.http.request(method, f"/ds/{bucket.id}/streams", content=b"x")
    assert response.status_code == 400

"""Extensions 1.1: bucket and stream identifier rules on the /ds surface."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    import httpx
    from ext_helpers import Bucket

VALID_BUCKETS = ["abcd", "a-b_c", "0123", "x" * 64, "under_score-and-dash-09"]
INVALID_BUCKETS = ["abc", "x" * 65, "ABCD", "abcD", "ab.cd", "ab%20cd", "%C3%A9bcd", "ab+cd"]


def _fresh(base: str) -> str:
    """``base`` made unique per run, keeping its length and alphabet."""
    suffix = uuid.uuid4().hex[: max(0, min(8, len(base) - 4))]
    return base[: len(base) - len(suffix)] + suffix


@pytest.mark.parametrize("bucket_id", VALID_BUCKETS)
def test_bucket_ids_matching_the_pattern_are_accepted(http: httpx.Client, bucket_id: str) -> None:
    bucket_id = _fresh(bucket_id)
    assert http.put(f"/ds/{bucket_id}").status_code == 201
    assert http.get(f"/ds/{bucket_id}").json()["bucket_id"] == bucket_id
    assert http.delete(f"/ds/{bucket_id}").status_code == 204


@pytest.mark.parametrize("bucket_id", INVALID_BUCKETS)
def test_bucket_ids_not_matching_the_pattern_are_400(http: httpx.Client, bucket_id: str) -> None:
    for method in ("PUT", "GET", "DELETE"):
        assert http.request(method, f"/ds/{bucket_id}").status_code == 400, method
    assert http.get(f"/ds/{bucket_id}/streams").status_code == 400
    assert http.put(f"/ds/{bucket_id}/s").status_code == 400
    assert http.get(f"/ds/{bucket_id}/s/bootstrap").status_code == 400


def test_stream_id_is_any_utf8(bucket: Bucket) -> None:
    for stream in ("plain", "with space", "ünïcødé-🙂", "a.b", "."):
        bucket.create_stream(stream)
    listed = {
        row["stream_id"] for row in bucket.http.get(f"/ds/{bucket.id}/streams").json()["streams"]
    }
    assert listed == {"plain", "with space", "ünïcødé-🙂", "a.b", "."}


@pytest.mark.parametrize("stream", ["a..b", "..", "x..", "a\x00b", "\x00"])
def test_stream_id_with_dotdot_or_nul_is_400(bucket: Bucket, stream: str) -> None:
    assert bucket.http.put(bucket.path(stream)).status_code == 400
    assert bucket.http.get(f"/ds/{bucket.id}").json()["streams"] == 0


def test_stream_id_with_slash_is_never_a_stream(bucket: Bucket) -> None:
    # An encoded "/" decodes into a path separator: no /ds route takes that shape.
    response = bucket.http.put(bucket.path("a/b"))
    assert 400 <= response.status_code < 500
    assert bucket.http.get(f"/ds/{bucket.id}").json()["streams"] == 0


def test_stream_id_over_122_bytes_is_400(http: httpx.Client) -> None:
    # With the shortest bucket id the combined key is 5 bytes longer than the stream id,
    # so 123 bytes fails both rules at once.
    bucket_id = uuid.uuid4().hex[:4]
    assert http.put(f"/ds/{bucket_id}").status_code == 201
    assert http.put(f"/ds/{bucket_id}/{'s' * 123}").status_code == 400
    assert http.put(f"/ds/{bucket_id}/{'s' * 200}").status_code == 400


def test_combined_key_limit_is_122_bytes(http: httpx.Client) -> None:
    bucket_id = _fresh("b" * 64)
    assert http.put(f"/ds/{bucket_id}").status_code == 201
    fits = "s" * (122 - 65)
    assert http.put(f"/ds/{bucket_id}/{fits}").status_code == 201
    assert http.put(f"/ds/{bucket_id}/{fits}x").status_code == 400
    short_bucket = uuid.uuid4().hex[:4]
    assert http.put(f"/ds/{short_bucket}").status_code == 201
    assert http.put(f"/ds/{short_bucket}/{'s' * 117}").status_code == 201
    assert http.put(f"/ds/{short_bucket}/{'s' * 118}").status_code == 400


def test_limits_count_utf8_bytes_not_characters(bucket: Bucket) -> None:
    budget = 122 - len(bucket.id) - 1  # bytes left for the stream id
    two_byte = "é" * (budget // 2)
    assert bucket.http.put(bucket.path(two_byte)).status_code == 201
    assert bucket.http.put(bucket.path(two_byte + "é")).status_code == 400


def test_streams_is_reserved_for_the_listing(bucket: Bucket) -> None:
    for method in ("PUT", "POST", "DELETE", "HEAD"):
        response = bucket.http.request(
            method, bucket.path("streams"), headers={"Content-Type": "text/plain"}
        )
        assert 400 <= response.status_code < 500, method
    for suffix in ("/bootstrap", "/snapshot"):
        status = bucket.http.get(bucket.path("streams", suffix)).status_code
        assert 400 <= status < 500, suffix
    listing = bucket.http.get(f"/ds/{bucket.id}/streams")
    assert listing.status_code == 200
    assert listing.json()["streams"] == []
    # Only the exact id is reserved.
    bucket.create_stream("streams-2")
    bucket.create_stream("stream")

"""Extensions 1.2, 1.3, 1.5: creating, describing and deleting buckets."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ext_helpers import Bucket, new_bucket_id

if TYPE_CHECKING:
    import httpx


def test_create_bucket_is_201_then_409(http: httpx.Client) -> None:
    bucket_id = new_bucket_id()
    assert http.put(f"/ds/{bucket_id}").status_code == 201
    assert http.put(f"/ds/{bucket_id}").status_code == 409
    assert http.get(f"/ds/{bucket_id}").status_code == 200


def test_creating_a_stream_never_creates_its_bucket(http: httpx.Client) -> None:
    bucket_id = new_bucket_id()
    response = http.put(f"/ds/{bucket_id}/s", headers={"Content-Type": "text/plain"})
    assert response.status_code == 404
    assert http.get(f"/ds/{bucket_id}").status_code == 404
    assert http.get(f"/ds/{bucket_id}/streams").status_code == 404
    # Nor does the base surface's same-named stream: it is created, the bucket is not.
    assert http.put(f"/v1/stream/{bucket_id}/s").status_code == 201
    assert http.get(f"/ds/{bucket_id}").status_code == 404
    assert http.put(f"/ds/{bucket_id}/s").status_code == 404


def test_bucket_metadata_has_id_and_stream_count(http: httpx.Client) -> None:
    bucket = Bucket.create(http)
    response = http.get(f"/ds/{bucket.id}")
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["bucket_id"] == bucket.id
    assert type(body["streams"]) is int
    assert body["streams"] == 0
    for stream in ("a", "b", "c"):
        bucket.create_stream(stream)
    assert http.get(f"/ds/{bucket.id}").json()["streams"] == 3
    assert http.delete(bucket.path("b")).status_code == 204
    assert http.get(f"/ds/{bucket.id}").json()["streams"] == 2


def test_bucket_metadata_of_missing_bucket_is_404(http: httpx.Client) -> None:
    assert http.get(f"/ds/{new_bucket_id()}").status_code == 404


def test_stream_count_is_per_bucket(http: httpx.Client) -> None:
    first, second = Bucket.create(http), Bucket.create(http)
    first.create_stream("s")
    second.create_stream("s")
    second.create_stream("t")
    assert http.get(f"/ds/{first.id}").json()["streams"] == 1
    assert http.get(f"/ds/{second.id}").json()["streams"] == 2


def test_delete_empty_bucket_is_204_then_404(http: httpx.Client) -> None:
    bucket = Bucket.create(http)
    response = http.delete(f"/ds/{bucket.id}")
    assert response.status_code == 204
    assert response.content == b""
    assert http.get(f"/ds/{bucket.id}").status_code == 404
    assert http.delete(f"/ds/{bucket.id}").status_code == 404
    # Its name is free again.
    assert http.put(f"/ds/{bucket.id}").status_code == 201


def test_delete_missing_bucket_is_404(http: httpx.Client) -> None:
    assert http.delete(f"/ds/{new_bucket_id()}").status_code == 404


def test_delete_non_empty_bucket_is_409_until_it_is_empty(http: httpx.Client) -> None:
    bucket = Bucket.create(http)
    bucket.create_stream("a")
    bucket.create_stream("b")
    assert http.delete(f"/ds/{bucket.id}").status_code == 409
    assert http.get(f"/ds/{bucket.id}").status_code == 200
    assert http.delete(bucket.path("a")).status_code == 204
    assert http.delete(f"/ds/{bucket.id}").status_code == 409
    assert http.delete(bucket.path("b")).status_code == 204
    assert http.delete(f"/ds/{bucket.id}").status_code == 204


def test_stream_ops_in_a_deleted_bucket_are_404(http: httpx.Client) -> None:
    bucket = Bucket.create(http)
    assert http.delete(f"/ds/{bucket.id}").status_code == 204
    assert http.put(bucket.path("s")).status_code == 404

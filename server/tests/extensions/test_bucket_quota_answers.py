"""Bucket quotas over HTTP: 507 and 413 with their reasons, the metadata, the metrics.

One server per backend with quotas set (``DS_QUOTAS__*``); each test works
in a bucket of its own, so each starts with the whole quota free.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import httpx
import pytest
from ext_helpers import OCTET, Bucket, offset, server_env
from prometheus_client.parser import text_string_to_metric_families
from support.postgres import postgres_env
from support.server_process import ServerProcess, free_port

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

QUOTA_BYTES = 1000
QUOTA_STREAMS = 4
UNBOUNDED = "qunbounded"


class QuotaServer:
    def __init__(self, http: httpx.Client, metrics_url: str) -> None:
        self.http = http
        self.metrics_url = metrics_url

    def gauges(self, bucket: str) -> dict[str, float]:
        text = httpx.get(self.metrics_url).text
        return {
            sample.name: sample.value
            for family in text_string_to_metric_families(text)
            for sample in family.samples
            if sample.name.startswith("ds_server_bucket_") and sample.labels == {"bucket": bucket}
        }


@pytest.fixture(scope="module", params=["memory", "sqlite", "postgres"])
def quota_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[QuotaServer]:
    metrics_port = free_port()
    extra = {
        "DS_QUOTAS__MAX_BYTES": str(QUOTA_BYTES),
        "DS_QUOTAS__MAX_STREAMS": str(QUOTA_STREAMS),
        "DS_QUOTAS__BUCKETS": json.dumps({UNBOUNDED: {"max_bytes": 0, "max_streams": 0}}),
        "DS_METRICS__PORT": str(metrics_port),
    }
    if request.param == "postgres":
        extra |= postgres_env(request.getfixturevalue("postgres"))
    data_dir: Path = tmp_path_factory.mktemp(f"quota-{request.param}")
    with (
        ServerProcess(env=server_env(request.param, data_dir, **extra)) as server,
        httpx.Client(base_url=server.url, timeout=30.0) as http,
    ):
        yield QuotaServer(http, f"http://127.0.0.1:{metrics_port}/metrics")


@pytest.fixture
def bucket(quota_server: QuotaServer) -> Bucket:
    return Bucket.create(quota_server.http)


def post(bucket: Bucket, stream: str, body: bytes) -> httpx.Response:
    return bucket.http.post(bucket.path(stream), content=body, headers={"Content-Type": OCTET})


def usage(bucket: Bucket) -> dict[str, int]:
    response = bucket.http.get(f"/ds/{bucket.id}")
    assert response.status_code == 200, response.text
    counted: dict[str, int] = response.json()["usage"]
    return counted


def test_an_append_past_the_quota_is_507_with_its_reason_and_writes_nothing(
    bucket: Bucket,
) -> None:
    bucket.create_stream("a", body=b"x" * 600)
    bucket.create_stream("b")
    refused = post(bucket, "b", b"y" * 401)
    assert refused.status_code == 507
    assert refused.headers["Content-Type"].startswith("text/plain")
    assert refused.text == (
        f"bucket {bucket.id!r} is at its storage quota: 600 of 1000 bytes used, this write "
        "needs 401 more; delete streams or publish snapshots to free room\n"
    )
    assert bucket.http.head(bucket.path("b")).headers["Stream-Next-Offset"] == offset(0)
    assert post(bucket, "b", b"y" * 400).status_code == 204
    assert usage(bucket) == {"bytes": 1000, "streams": 2}


def test_a_write_larger_than_the_whole_quota_is_413(bucket: Bucket) -> None:
    bucket.create_stream("a")
    refused = post(bucket, "a", b"x" * (QUOTA_BYTES + 1))
    assert refused.status_code == 413
    assert "larger than bucket" in refused.text
    assert "whole storage quota of 1000 bytes" in refused.text


def test_creates_and_forks_past_the_quotas_are_507(bucket: Bucket) -> None:
    bucket.create_stream("src", body=b"s" * 600)
    forked = bucket.http.put(bucket.path("fork"), headers={"Stream-Forked-From": "src"})
    assert forked.status_code == 507, forked.text  # the fork would read 600 more bytes
    for name in ("b", "c", "d"):
        bucket.create_stream(name)
    refused = bucket.http.put(bucket.path("e"), headers={"Content-Type": OCTET})
    assert refused.status_code == 507
    assert "stream quota of 4 streams" in refused.text
    assert bucket.http.head(bucket.path("e")).status_code == 404
    # The base surface names the same bucket: same quota.
    refused = bucket.http.put(f"/v1/stream/{bucket.id}/e", headers={"Content-Type": OCTET})
    assert refused.status_code == 507
    assert bucket.http.delete(bucket.path("b")).status_code == 204
    assert (
        bucket.http.put(f"/v1/stream/{bucket.id}/e", headers={"Content-Type": OCTET}).status_code
        == 201
    )


def test_a_snapshot_frees_room_and_one_that_adds_more_than_room_is_507(bucket: Bucket) -> None:
    bucket.create_stream("s", body=b"x" * 900)
    assert post(bucket, "s", b"y" * 200).status_code == 507
    # It drops 900 bytes and keeps 1001: 101 more than the stream held, and no room for them.
    assert bucket.publish("s", offset(900), b"z" * 1001).status_code == 507
    assert usage(bucket) == {"bytes": 900, "streams": 1}
    assert bucket.publish("s", offset(900), b"{}", "application/json").status_code == 204
    assert usage(bucket) == {"bytes": 2, "streams": 1}
    assert post(bucket, "s", b"y" * 200).status_code == 204


def test_bucket_metadata_shows_usage_and_quota(quota_server: QuotaServer, bucket: Bucket) -> None:
    bucket.create_stream("a", body=b"abc")
    body = quota_server.http.get(f"/ds/{bucket.id}").json()
    assert body["streams"] == 1
    assert body["usage"] == {"bytes": 3, "streams": 1}
    assert body["quota"] == {"max_bytes": QUOTA_BYTES, "max_streams": QUOTA_STREAMS}
    created = quota_server.http.put(f"/ds/{UNBOUNDED}")
    assert created.status_code in (201, 409)
    assert quota_server.http.get(f"/ds/{UNBOUNDED}").json()["quota"] == {
        "max_bytes": None,
        "max_streams": None,
    }


def test_metrics_show_each_buckets_usage_and_quota(
    quota_server: QuotaServer, bucket: Bucket
) -> None:
    bucket.create_stream("a", body=b"x" * 250)
    bucket.create_stream("b", body=b"y" * 50)
    assert quota_server.gauges(bucket.id) == {
        "ds_server_bucket_stored_bytes": 300,
        "ds_server_bucket_stored_streams": 2,
        "ds_server_bucket_quota_bytes": QUOTA_BYTES,
        "ds_server_bucket_quota_streams": QUOTA_STREAMS,
    }
    # No limit, no quota series.
    quota_server.http.put(f"/ds/{UNBOUNDED}")
    assert set(quota_server.gauges(UNBOUNDED)) == {
        "ds_server_bucket_stored_bytes",
        "ds_server_bucket_stored_streams",
    }

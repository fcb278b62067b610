"""Bucket listings and HEAD headers as StreamInfo; URLs of the surfaces."""

from __future__ import annotations

import httpx
import pytest
from durable_sessions.protocol import (
    ListingFormatError,
    StreamInfo,
    bootstrap_url_of,
    bucket_stream_url,
    parse_listing,
    snapshot_url,
    stream_url,
    subscription_url,
)


def test_a_listing_page() -> None:
    body = (
        b'{"streams": [{"stream_id": "r1", "content_type": "application/json", "tail_offset": 7,'
        b' "status": "Closed", "created_at_ms": 5}, {"stream_id": "r2", "content_type":'
        b' "text/plain", "tail_offset": 0}], "next_cursor": "r2", "has_more": true}'
    )
    page = parse_listing("b", body)
    assert page.streams == [
        StreamInfo("b/r1", "application/json", 7, closed=True, created_ms=5),
        StreamInfo("b/r2", "text/plain", 0),
    ]
    assert page.streams[0].is_json
    assert page.next_cursor == "r2"
    assert page.has_more
    last = parse_listing("b", b'{"streams": [], "next_cursor": "x", "has_more": false}')
    assert last.next_cursor is None


def test_a_malformed_listing() -> None:
    with pytest.raises(ListingFormatError):
        parse_listing("b", b'{"streams": [{"stream_id": 1}]}')


def test_head_headers() -> None:
    headers = httpx.Headers(
        {
            "content-type": "application/json",
            "stream-next-offset": "0" * 19 + "9",
            "stream-closed": "true",
            "stream-snapshot-offset": "0" * 19 + "4",
        }
    )
    assert StreamInfo.from_headers("b/s", headers) == StreamInfo(
        "b/s", "application/json", 9, closed=True, snapshot_offset=4
    )


def test_urls() -> None:
    base = "http://h:1/"
    assert stream_url(base, "/a b/c") == "http://h:1/v1/stream/a%20b/c"
    assert bucket_stream_url(base, "a/c?") == "http://h:1/ds/a/c%3F"
    assert snapshot_url("http://h/ds/a/b", "0" * 20) == "http://h/ds/a/b/snapshot/" + "0" * 20
    assert subscription_url(base, "s/1") == "http://h:1/v1/stream/__ds/subscriptions/s%2F1"


@pytest.mark.parametrize(
    ("url", "bootstrap"),
    [
        ("http://h/ds/a/b", "http://h/ds/a/b/bootstrap"),
        ("http://h/v1/stream/a/b?x=1", "http://h/ds/a/b/bootstrap"),
        ("http://h/v1/stream/pg-items", "http://h/v1/stream/pg-items/bootstrap"),
        ("http://h/ds/pg-items", None),
        ("http://h/v1/stream/a/b/c", None),
        ("http://h/elsewhere/a/b", None),
    ],
)
def test_where_a_stream_serves_its_bootstrap(url: str, bootstrap: str | None) -> None:
    assert bootstrap_url_of(url) == bootstrap

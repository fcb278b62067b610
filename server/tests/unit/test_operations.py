"""Every request maps to one operation of a bounded set, never to its path."""

from __future__ import annotations

import pytest
from ds_server.observability.operations import OPERATIONS, OTHER, operation

CASES = [
    ("PUT", "/v1/stream/chat/room", b"", "create"),
    ("POST", "/v1/stream/chat/room", b"", "append"),
    ("GET", "/v1/stream/chat/room", b"offset=-1", "read"),
    ("GET", "/v1/stream/chat/room", b"offset=-1&live=long-poll", "read_long_poll"),
    ("GET", "/v1/stream/chat/room", b"live=sse&offset=now&access_token=x", "read_sse"),
    # A parameter that only mentions a mode is not one.
    ("GET", "/v1/stream/chat/room", b"offset=-1&cursor=live=sse", "read"),
    ("HEAD", "/v1/stream/chat/room", b"", "head"),
    ("DELETE", "/v1/stream/chat/room", b"", "delete"),
    ("POST", "/ds/chat/room", b"", "append"),
    ("GET", "/ds/chat/room", b"live=sse", "read_sse"),
    ("PUT", "/ds/chat", b"", "bucket_create"),
    ("GET", "/ds/chat", b"", "bucket_get"),
    ("DELETE", "/ds/chat", b"", "bucket_delete"),
    ("GET", "/ds/chat/streams", b"", "bucket_list"),
    ("GET", "/ds/chat/room/bootstrap", b"", "bootstrap"),
    ("PUT", "/ds/chat/room/snapshot/00000000000000000010", b"", "snapshot_publish"),
    ("GET", "/ds/chat/room/snapshot", b"", "snapshot_read"),
    ("DELETE", "/ds/chat/room/snapshot/00000000000000000010", b"", "snapshot_delete"),
    # A top-level stream's extensions, below its /v1/stream path.
    ("GET", "/v1/stream/pg-items/bootstrap", b"", "bootstrap"),
    ("PUT", "/v1/stream/pg-items/snapshot/00000000000000000010", b"", "snapshot_publish"),
    ("GET", "/v1/stream/pg-items/snapshot", b"", "snapshot_read"),
    ("PUT", "/v1/stream/__ds/subscriptions/s1", b"", "subscription_put"),
    ("GET", "/v1/stream/__ds/subscriptions/s1", b"", "subscription_get"),
    ("DELETE", "/v1/stream/__ds/subscriptions/s1", b"", "subscription_delete"),
    ("POST", "/v1/stream/__ds/subscriptions/s1/streams", b"", "subscription_streams"),
    ("DELETE", "/v1/stream/__ds/subscriptions/s1/streams/a/b", b"", "subscription_streams"),
    ("POST", "/v1/stream/__ds/subscriptions/s1/ack", b"", "subscription_ack"),
    ("POST", "/v1/stream/__ds/subscriptions/s1/claim", b"", "subscription_claim"),
    ("POST", "/v1/stream/__ds/subscriptions/s1/release", b"", "subscription_release"),
    ("POST", "/v1/stream/__ds/subscriptions/s1/callback", b"", "subscription_callback"),
    ("GET", "/v1/stream/__ds/jwks.json", b"", "jwks"),
    ("GET", "/healthz", b"", "health"),
    ("GET", "/ui/", b"", "viewer"),
    ("GET", "/ui/app.js", b"", "viewer"),
    ("OPTIONS", "/v1/stream/chat/room", b"", "preflight"),
    ("GET", "/metrics", b"", OTHER),
    ("GET", "/nowhere/at/all", b"", OTHER),
    ("PATCH", "/v1/stream/chat/room", b"", OTHER),
    ("GET", "/v1/stream/__ds/unknown", b"", OTHER),
    ("GET", "/ds/chat/room/unknown", b"", OTHER),
]


@pytest.mark.parametrize(("method", "path", "query", "expected"), CASES)
def test_operation_of_a_request(method: str, path: str, query: bytes, expected: str) -> None:
    assert operation(method, path, query) == expected


def test_every_operation_is_in_the_bounded_set() -> None:
    assert {expected for *_, expected in CASES} <= set(OPERATIONS)
    assert len(OPERATIONS) == len(set(OPERATIONS))

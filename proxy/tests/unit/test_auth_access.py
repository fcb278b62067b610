"""ds_server.auth.access: which bucket a request touches, and how."""

from __future__ import annotations

import pytest
from ds_server.auth import Access, Mode, bucket_of, required_access

PREFIX = "/v1/stream"
R, W = Mode.READ, Mode.WRITE


def need(method: str, path: str, *sources: str) -> tuple[Access, ...]:
    return required_access(method, path, stream_prefix=PREFIX, fork_sources=sources)


@pytest.mark.parametrize(
    ("path", "bucket"),
    [
        ("/v1/stream/chat/room-1", "chat"),
        ("/v1/stream/chat", "chat"),
        ("/v1/stream/chat/", "chat"),
        ("/v1/stream//chat/x", "chat"),
        ("/v1/stream/chat/a/b/c", "chat"),
        ("/v1/stream", None),
        ("/v1/stream/", None),
        ("/v1/stream/__ds/subscriptions/x", None),
        ("/v1/streamer/chat", None),
        ("/ds/chat-room/s1", "chat-room"),
        ("/ds/chat-room/s1/bootstrap", "chat-room"),
        ("/ds/chat-room/s1/snapshot/00000000000000000004", "chat-room"),
        ("/ds/chat-room", "chat-room"),
        ("/ds/__ab/s", "__ab"),
        ("/ds", None),
        ("/ds/", None),
        ("/dsx/chat/s", None),
        ("/healthz", None),
        ("/metrics", None),
    ],
)
def test_bucket_of(path: str, bucket: str | None) -> None:
    assert bucket_of(path, stream_prefix=PREFIX) == bucket


@pytest.mark.parametrize("method", ["GET", "HEAD", "get"])
def test_reads(method: str) -> None:
    assert need(method, "/ds/chat/s") == (Access("chat", R),)
    assert need(method, "/v1/stream/chat/s") == (Access("chat", R),)


@pytest.mark.parametrize("method", ["PUT", "POST", "DELETE", "PATCH", "PROPFIND"])
def test_everything_else_writes(method: str) -> None:
    assert need(method, "/ds/chat/s") == (Access("chat", W),)


def test_public_and_preflight_need_nothing() -> None:
    assert need("GET", "/healthz") == ()
    assert need("OPTIONS", "/v1/stream/chat/s") == ()


def test_other_paths_need_the_wildcard() -> None:
    assert need("GET", "/metrics") == (Access(None, R),)
    assert need("POST", "/v1/stream/__ds/x/claim") == (Access(None, W),)


class TestForks:
    def test_absolute_source_on_the_stream_surface(self) -> None:
        assert need("PUT", "/v1/stream/mine/f", "/v1/stream/theirs/s") == (
            Access("mine", W),
            Access("theirs", R),
        )

    def test_bare_source_is_a_stream_path(self) -> None:
        assert need("PUT", "/v1/stream/mine/f", "theirs/s") == (
            Access("mine", W),
            Access("theirs", R),
        )
        assert need("PUT", "/v1/stream/mine/f", "/theirs/s")[1] == Access("theirs", R)

    def test_source_in_the_same_bucket(self) -> None:
        assert need("PUT", "/v1/stream/mine/f", "/v1/stream/mine/s") == (
            Access("mine", W),
            Access("mine", R),
        )

    def test_a_ds_looking_source_on_the_stream_surface_is_a_stream_path(self) -> None:
        # The stream routes read "/ds/x/s" as the stream path "ds/x/s": bucket "ds".
        assert need("PUT", "/v1/stream/mine/f", "/ds/x/s")[1] == Access("ds", R)

    def test_every_copy_of_the_header_counts(self) -> None:
        assert set(need("PUT", "/v1/stream/mine/f", "a/s", "b/s")) == {
            Access("mine", W),
            Access("a", R),
            Access("b", R),
        }

    def test_on_the_bucket_surface_every_reading_is_required(self) -> None:
        assert need("PUT", "/ds/mine/f", "/ds/theirs/s")[1:] == (Access("theirs", R),)
        assert need("PUT", "/ds/mine/f", "s") == (Access("mine", W), Access("mine", R))
        assert set(need("PUT", "/ds/mine/f", "theirs/s")) == {
            Access("mine", W),
            Access("mine", R),
            Access("theirs", R),
        }

    def test_only_put_forks(self) -> None:
        assert need("POST", "/v1/stream/mine/f", "theirs/s") == (Access("mine", W),)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/stream/__ds/jwks.json"),
        ("POST", "/v1/stream/__ds/subscriptions/sub-1/callback"),
        ("POST", "/v1/stream/__ds/subscriptions/sub-1/ack"),
        ("POST", "/v1/stream/__ds/subscriptions/sub-1/release"),
    ],
)
def test_self_authenticated_subscription_endpoints_need_no_scope(method: str, path: str) -> None:
    assert required_access(method, path, stream_prefix=PREFIX) == ()


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PUT", "/v1/stream/__ds/subscriptions/sub-1"),
        ("POST", "/v1/stream/__ds/subscriptions/sub-1/claim"),
        ("POST", "/v1/stream/__ds/subscriptions/sub-1/callback/x"),
        ("GET", "/v1/stream/__ds/jwks.jsonx"),
    ],
)
def test_managing_subscriptions_needs_the_wildcard(method: str, path: str) -> None:
    assert all(
        access.bucket is None for access in required_access(method, path, stream_prefix=PREFIX)
    )
    assert required_access(method, path, stream_prefix=PREFIX) != ()

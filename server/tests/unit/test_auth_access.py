"""ds_server.auth.access: which bucket a request touches, and how."""

from __future__ import annotations

import pytest
from ds_server.auth import Access, Mode, required_access
from ds_server.edge.surfaces import bucket_of_path

R, W = Mode.READ, Mode.WRITE


def need(method: str, path: str, *sources: str) -> tuple[Access, ...]:
    """The bucket accesses a request needs (what stream each names is checked apart)."""
    accesses = required_access(method, path, fork_sources=sources)
    return tuple(dict.fromkeys(Access(a.bucket, a.mode) for a in accesses))


def streams(method: str, path: str, *sources: str) -> list[str | None]:
    """The stream each access names."""
    return [a.stream for a in required_access(method, path, fork_sources=sources)]


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
        # "__" marks server-owned names on both surfaces: they are one namespace.
        ("/ds/__ab/s", None),
        ("/v1/stream/__ab/s", None),
        ("/ds", None),
        ("/ds/", None),
        ("/dsx/chat/s", None),
        ("/healthz", None),
        ("/metrics", None),
    ],
)
def test_bucket_of_path(path: str, bucket: str | None) -> None:
    assert bucket_of_path(path) == bucket


@pytest.mark.parametrize("method", ["GET", "HEAD", "get"])
def test_reads(method: str) -> None:
    assert need(method, "/ds/chat/s") == (Access("chat", R),)
    assert need(method, "/v1/stream/chat/s") == (Access("chat", R),)


@pytest.mark.parametrize("method", ["PUT", "POST", "DELETE", "PATCH", "PROPFIND"])
def test_everything_else_writes(method: str) -> None:
    assert need(method, "/ds/chat/s") == (Access("chat", W),)


@pytest.mark.parametrize(
    ("method", "path", "stream"),
    [
        ("GET", "/v1/stream/chat/a/b", "chat/a/b"),
        ("GET", "/v1/stream/chat/a/", "chat/a"),
        ("GET", "/v1/stream//chat/a", "chat/a"),
        ("GET", "/v1/stream/chat", "chat"),
        ("GET", "/ds/chat/s/bootstrap", "chat/s"),
        ("GET", "/ds/chat/s/snapshot", "chat/s"),
        ("PUT", "/ds/chat/s/snapshot/00000000000000000004", "chat/s"),
        # Paths that address no single stream name none.
        ("GET", "/ds/chat/streams", None),
        ("PUT", "/ds/chat/streams", "chat/streams"),
        ("GET", "/ds/chat", None),
        ("GET", "/ds/chat/s/bootstrap/x", None),
        ("GET", "/ds/chat/s/snapshot/1/x", None),
        ("GET", "/ds/chat/s/other", None),
        ("GET", "/v1/stream/chat//a", None),
        ("GET", "/v1/stream/__ds/subscriptions/x", None),
        ("GET", "/ds/__ab/s", None),
        ("GET", "/v1/stream/__ab/s", None),
        ("GET", "/metrics", None),
    ],
)
def test_the_stream_a_request_addresses(method: str, path: str, stream: str | None) -> None:
    assert streams(method, path) == [stream]


def test_a_fork_names_its_source_stream() -> None:
    assert streams("PUT", "/ds/chat/f", "s") == ["chat/f", "chat/s"]
    assert streams("PUT", "/v1/stream/mine/f", "/ds/theirs/s") == ["mine/f", "theirs/s"]
    assert streams("PUT", "/v1/stream/mine/f", "/v1/stream/__x/s") == ["mine/f", None]


def test_public_and_preflight_need_nothing() -> None:
    assert need("GET", "/healthz") == ()
    assert need("OPTIONS", "/v1/stream/chat/s") == ()


@pytest.mark.parametrize("method", ["GET", "HEAD"])
@pytest.mark.parametrize("path", ["/ui", "/ui/", "/ui/index.html", "/ui/js/main.js"])
def test_the_viewer_page_is_public_to_read(method: str, path: str) -> None:
    assert need(method, path) == ()


def test_the_viewer_page_is_not_writable_and_names_are_exact() -> None:
    assert need("POST", "/ui/index.html") == (Access(None, W),)
    assert need("PUT", "/ui/") == (Access(None, W),)
    assert need("GET", "/uix") == (Access(None, R),)
    assert need("GET", "/v1/stream/ui/s") == (Access("ui", R),)


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

    def test_a_ds_source_on_the_stream_surface_names_its_bucket(self) -> None:
        # "/ds/x/s" is the stream "x/s" (bucket "x"), as the fork itself reads it.
        assert need("PUT", "/v1/stream/mine/f", "/ds/xbucket/s")[1] == Access("xbucket", R)

    def test_every_copy_of_the_header_counts(self) -> None:
        assert set(need("PUT", "/v1/stream/mine/f", "a/s", "b/s")) == {
            Access("mine", W),
            Access("a", R),
            Access("b", R),
        }

    def test_a_bare_source_on_the_bucket_surface_is_in_the_same_bucket(self) -> None:
        assert need("PUT", "/ds/mine/f", "s") == (Access("mine", W), Access("mine", R))
        assert need("PUT", "/ds/mine/f", "secret") == (Access("mine", W), Access("mine", R))

    def test_absolute_sources_on_the_bucket_surface(self) -> None:
        assert need("PUT", "/ds/mine/f", "/ds/theirs/s")[1:] == (Access("theirs", R),)
        assert need("PUT", "/ds/mine/f", "/v1/stream/secret")[1:] == (Access("secret", R),)

    def test_percent_encoded_sources_are_decoded_first(self) -> None:
        assert need("PUT", "/v1/stream/mine/f", "/v1/stream/the%69rs/s")[1] == Access("theirs", R)
        assert need("PUT", "/ds/mine/f", "%2Fds%2Ftheirs%2Fs")[1] == Access("theirs", R)

    def test_unresolvable_sources_add_nothing(self) -> None:
        # The fork answers 400 for these before reading anything.
        for source in ("theirs/s", "/theirs/s", "/ds/theirs", "/ds/theirs/a/b", "a/../b", "%ff"):
            assert need("PUT", "/ds/mine/f", source) == (Access("mine", W),), source

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
    assert required_access(method, path) == ()


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
    assert all(access.bucket is None for access in required_access(method, path))
    assert required_access(method, path) != ()

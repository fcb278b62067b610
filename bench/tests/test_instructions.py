"""ds_bench.instructions: the requests the callgrind count sends."""

from __future__ import annotations

from ds_bench.instructions import FORWARDED_POST, POST
from ds_server.auth import Access, Mode, identity_from_headers, required_access


def _head(request: bytes) -> tuple[bytes, list[tuple[bytes, bytes]], bytes]:
    head, body = request.split(b"\r\n\r\n", 1)
    start, *lines = head.split(b"\r\n")
    headers = [tuple(line.split(b": ", 1)) for line in lines]
    return start, [(name.lower(), value) for name, value in headers], body


def test_the_forwarded_post_is_the_direct_one_with_envoys_headers() -> None:
    start, headers, body = _head(FORWARDED_POST)
    direct_start, direct_headers, direct_body = _head(POST)
    assert (start, body) == (direct_start, direct_body)
    names = {name for name, _ in headers}
    assert {name for name, _ in direct_headers} <= names
    added = {b"x-forwarded-for", b"x-forwarded-proto", b"x-request-id", b"x-jwt-payload"}
    assert added <= names
    assert b"authorization" not in names  # Envoy removes the token it verified


def test_the_forwarded_payload_may_append_to_the_counted_stream() -> None:
    _, headers, _ = _head(FORWARDED_POST)
    identity = identity_from_headers(headers, "ds")
    (needed,) = required_access("POST", "/v1/stream/counted")
    assert needed == Access("counted", Mode.WRITE, "counted")
    assert identity.scopes.allows(needed)

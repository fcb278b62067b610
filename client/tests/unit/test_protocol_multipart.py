"""The streaming multipart reader: parts cut exactly, whatever the chunking."""

from __future__ import annotations

import pytest
from durable_sessions.protocol import (
    BootstrapFormatError,
    MultipartError,
    aiter_parts,
    boundary_of,
    iter_parts,
    parse_bootstrap,
)
from hypothesis import given
from hypothesis import strategies as st

BOUNDARY = b"rr-bootstrap-9f1c"


def _body(parts: list[tuple[str, bytes]], boundary: bytes = BOUNDARY) -> bytes:
    out = b""
    for content_type, payload in parts:
        out += b"--" + boundary + b"\r\nContent-Type: " + content_type.encode() + b"\r\n\r\n"
        out += payload + b"\r\n"
    return out + b"--" + boundary + b"--\r\n"


def _chunks(body: bytes, sizes: list[int]) -> list[bytes]:
    chunks, at = [], 0
    for size in sizes:
        chunks.append(body[at : at + size])
        at += size
    return [*chunks, body[at:]]


payloads = st.lists(
    st.tuples(st.sampled_from(["application/json", "application/octet-stream"]), st.binary()),
    min_size=1,
    max_size=6,
)


@given(payloads, st.lists(st.integers(min_value=1, max_value=7), max_size=40))
def test_any_chunking_gives_the_same_parts(
    parts: list[tuple[str, bytes]], sizes: list[int]
) -> None:
    body = _body(parts)
    assert list(iter_parts(_chunks(body, sizes), BOUNDARY)) == parts


async def test_async_reader() -> None:
    parts = [("application/json", b'{"a": 1}'), ("application/octet-stream", b"\r\n--x\r\n")]

    async def source():  # type: ignore[no-untyped-def]
        for chunk in _chunks(_body(parts), [3] * 30):
            yield chunk

    assert [part async for part in aiter_parts(source(), BOUNDARY)] == parts


def test_boundary_of_content_type() -> None:
    assert boundary_of('multipart/mixed; boundary="abc"') == b"abc"
    assert boundary_of("multipart/mixed;boundary=abc; x=y") == b"abc"
    with pytest.raises(MultipartError):
        boundary_of("application/json")
    with pytest.raises(MultipartError):
        boundary_of("multipart/mixed")


def test_a_body_cut_short_is_refused() -> None:
    body = _body([("application/json", b"[1]")])
    with pytest.raises(MultipartError):
        list(iter_parts([body[:-8]], BOUNDARY))


def test_bootstrap_parse_reads_the_headers() -> None:
    body = _body([("application/json", b'{"s": 1}'), ("application/json", b"[2]")])
    headers = {"Stream-Snapshot-Offset": "0" * 19 + "5", "Stream-Next-Offset": "0" * 19 + "8"}
    state = parse_bootstrap(f"multipart/mixed; boundary={BOUNDARY.decode()}", body, headers)
    assert state.snapshot == b'{"s": 1}'
    assert state.messages == [("application/json", b"[2]")]
    with pytest.raises(BootstrapFormatError):
        parse_bootstrap(f"multipart/mixed; boundary={BOUNDARY.decode()}", body, {})

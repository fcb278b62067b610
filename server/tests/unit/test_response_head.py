"""The response head: the bytes, framing and errors of uvicorn's own ``send``, for any headers.

The reference below is uvicorn's httptools ``send`` for a response start,
header by header, as uvicorn 0.3x writes it; ``response_head`` takes a
shortcut for the usual response and must never differ from it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from ds_server import response_head as module
from ds_server.response_head import response_head
from hypothesis import given
from hypothesis import strategies as st
from uvicorn.protocols.http.httptools_impl import HEADER_RE, HEADER_VALUE_RE, STATUS_LINE

if TYPE_CHECKING:
    import re

    from ds_server.response_head import ResponseHead

Headers = list[tuple[bytes, bytes]]


def uvicorn_head(
    status: int, headers: Headers, *, keep_alive: bool, head_request: bool
) -> tuple[bytes, bool, int, bool]:
    """What uvicorn's ``RequestResponseCycle.send`` writes and decides for a response start."""
    content = [STATUS_LINE[status]]
    chunked: bool | None = None
    content_length = 0
    has_connection_close = False
    for name, value in headers:
        if HEADER_RE.search(name):
            raise RuntimeError("Invalid HTTP header name.")
        if HEADER_VALUE_RE.search(value):
            raise RuntimeError("Invalid HTTP header value.")
        name = name.lower()
        if name == b"content-length" and chunked is None:
            content_length = int(value.decode())
            chunked = False
        elif name == b"transfer-encoding" and value.lower() == b"chunked":
            content_length = 0
            chunked = True
        elif name == b"connection":
            connection = [token.lower().strip() for token in value.split(b",")]
            if b"close" in connection:
                keep_alive = False
                has_connection_close = True
        content.extend([name, b": ", value, b"\r\n"])
    if not keep_alive and not has_connection_close:
        content.append(b"connection: close\r\n")
    if chunked is None and not head_request and status not in (204, 304):
        chunked = True
        content.append(b"transfer-encoding: chunked\r\n")
    content.append(b"\r\n")
    return b"".join(content), bool(chunked), content_length, keep_alive


def ours(head: ResponseHead) -> tuple[bytes, bool, int, bool]:
    return head.data, head.chunked, head.content_length, head.keep_alive


def assert_same(status: int, headers: Headers, *, keep_alive: bool, head_request: bool) -> None:
    try:
        expected = uvicorn_head(status, headers, keep_alive=keep_alive, head_request=head_request)
    except (RuntimeError, ValueError):
        # Refused too (uvicorn answers 500 either way). Which error comes first
        # may differ: the characters of all headers are checked before any
        # Content-Length is read, as the server did before this shortcut.
        with pytest.raises((RuntimeError, ValueError)):
            response_head(status, headers, keep_alive=keep_alive, head_request=head_request)
        return
    made = response_head(status, headers, keep_alive=keep_alive, head_request=head_request)
    assert ours(made) == expected


NAMES = st.sampled_from(
    [
        b"date",
        b"stream-next-offset",
        b"Stream-Next-Offset",
        b"content-type",
        b"content-length",
        b"Content-Length",
        b"x-content-length",
        b"transfer-encoding",
        b"connection",
        b"x-connection-id",
        b"etag",
        b"bad name",
        b"bad\x00name",
        b"(paren)",
        b"-",
        b"",
    ]
)
VALUES = st.one_of(
    st.sampled_from(
        [b"0", b"12", b"chunked", b"CHUNKED", b"close", b"keep-alive, Close", b"text/plain"]
    ),
    st.binary(max_size=12),
)
HEADERS = st.lists(st.tuples(NAMES, VALUES), max_size=6)
STATUSES = st.sampled_from([200, 201, 204, 304, 404, 500])


@given(status=STATUSES, headers=HEADERS, keep_alive=st.booleans(), head_request=st.booleans())
def test_any_response_start_gives_uvicorns_bytes_framing_and_errors(
    status: int, headers: Headers, keep_alive: bool, head_request: bool
) -> None:
    assert_same(status, headers, keep_alive=keep_alive, head_request=head_request)


@pytest.mark.parametrize(
    "headers",
    [
        [],
        [(b"date", b"Thu, 27 Nov 2026 08:12:09 GMT"), (b"stream-next-offset", b"0_12")],
        [(b"content-type", b"application/json"), (b"content-length", b"12")],
        [(b"content-length", b"3"), (b"content-length", b"5")],
        [(b"x-content-length", b"3")],
        [(b"content-length", b"3"), (b"transfer-encoding", b"chunked")],
        [(b"transfer-encoding", b"chunked"), (b"content-length", b"3")],
        [(b"connection", b"keep-alive, close")],
        [(b"X-Mixed", b"1")],
        [(b"x-tab", b"a\tb"), (b"x-high", b"\xff\x80")],
        [(b"x-bad", b"a\nb")],
        [(b"x-del", b"\x7f")],
        [(b"bad:name", b"1")],
    ],
)
@pytest.mark.parametrize("status", [200, 204, 304])
@pytest.mark.parametrize("keep_alive", [True, False])
@pytest.mark.parametrize("head_request", [True, False])
def test_the_usual_and_unusual_heads_match(
    headers: Headers, status: int, keep_alive: bool, head_request: bool
) -> None:
    assert_same(status, headers, keep_alive=keep_alive, head_request=head_request)


@pytest.mark.parametrize(
    ("table", "expression"),
    [(module._NAME_TABLE, HEADER_RE), (module._VALUE_TABLE, HEADER_VALUE_RE)],
)
def test_the_tables_change_exactly_the_bytes_uvicorn_refuses(
    table: bytes, expression: re.Pattern[bytes]
) -> None:
    for byte in range(256):
        single = bytes([byte])
        assert (single.translate(table) != single) == bool(expression.search(single)), byte

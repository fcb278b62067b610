"""Hostile requests never make the server fail (5xx) or stop answering.

Requests go straight to the served ASGI callable, as a server would pass
them on: any method, a raw path (``..`` and ``//`` left as sent, percent
escapes decoded the way uvicorn decodes them), any query string, repeated
and oversized headers, any body.

One app serves every example; each example runs under its own stream
namespace (``{ns}`` below), so what an example creates is all it meets and
a failing example replays the same way. Oversized values are generated as
placeholders (``{big}``, ``{digits}``) and expanded when sent, which keeps
failing examples short enough to print.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

import pytest
from ds_server import create_app
from ds_server.app import asgi_app
from ds_server.settings import LimitsSection, ServerSection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar.testing import TestClient
from support.request_fuzzer import HEADER_VALUES as FUZZED_HEADER_VALUES
from support.request_fuzzer import OFFSET_VALUES

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from ds_server.settings import Settings

# Long enough for any single request; a hang fails the test instead of stalling it.
_REQUEST_TIMEOUT_SECS = 10.0


@dataclass
class Reply:
    status: int | None = None
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    body: bytes = b""


async def call(
    app: Any, method: str, target: str, headers: list[tuple[bytes, bytes]], body: bytes
) -> Reply:
    """One HTTP request through the ASGI interface; ``target`` is the ASCII request target."""
    raw_path, _, query = target.partition("?")
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        # uvicorn decodes percent escapes as UTF-8, replacing what does not decode.
        "path": unquote(raw_path),
        "raw_path": raw_path.encode("ascii"),
        "query_string": query.encode("ascii"),
        "root_path": "",
        "headers": [(b"host", b"testserver.local"), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver.local", 80),
        "state": {},
    }
    reply = Reply()
    done = asyncio.Event()
    parts = [body[: len(body) // 2], body[len(body) // 2 :]]

    async def receive() -> dict[str, Any]:
        if parts:
            chunk = parts.pop(0)
            return {"type": "http.request", "body": chunk, "more_body": bool(parts)}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            assert reply.status is None, "response started twice"
            reply.status = message["status"]
            reply.headers = list(message.get("headers", []))
        elif message["type"] == "http.response.body":
            assert reply.status is not None, "body before response start"
            reply.body += message.get("body", b"")
            if not message.get("more_body", False):
                done.set()

    try:
        await asyncio.wait_for(app(scope, receive, send), _REQUEST_TIMEOUT_SECS)
    finally:
        done.set()
    return reply


# -- strategies --------------------------------------------------------------

METHODS = ["GET", "PUT", "POST", "HEAD", "DELETE", "OPTIONS", "PATCH"]

PATH_PIECES = [
    "a",
    "b",
    "a",  # weighted: requests often meet a stream an earlier one created
    "..",
    ".",
    "",
    "%00",
    "%2e%2e",
    "%2E",
    "%2f",
    "%2F..",
    "%252e%252e",
    "%ff",
    "%c3%28",
    "%0a",
    "%0d%0a",
    "%7f",
    "%20",
    "é",
    "日本",
    "\U0001f600",
    ";",
    "~",
    "x" * 4100,
]

NS = "/v1/stream/{ns}/"
PREFIXES = [
    NS,
    NS,
    NS,
    "/v1/stream/{ns}//",
    "/v1/stream/{ns}",
    "/v1/stream",
    "/v1/",
    "//v1/stream/{ns}/",
]

OFFSETS = OFFSET_VALUES
QUERY_VALUES = [*OFFSETS, "long-poll", "sse", "SSE", "true", "%ff", "%00", "..", "%", "=", "&"]
QUERY_KEYS = ["offset", "offset", "live", "cursor", "x", ""]

HEADER_VALUES: dict[str, list[str]] = {
    **FUZZED_HEADER_VALUES,
    "stream-forked-from": [
        "{ns}/a",
        "/v1/stream/{ns}/a",
        "{ns}/b",
        "..",
        "/v1/stream/{ns}/../a",
        "",
        "%00",
        "{ns}/a/",
    ],
    # In process a body's length can disagree with its header; over a socket it can't.
    "content-length": ["0", "5", "-1", "abc", "99999999999999999999"],
}

# Header values as a server passes them on: no CR, LF or NUL, but anything else in latin-1.
header_text = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0xFF, blacklist_characters="\x7f"),
    max_size=40,
)
header_values = {
    name: st.sampled_from(values) | header_text | st.sampled_from(["{digits}", "{big}"])
    for name, values in HEADER_VALUES.items()
}
headers_strategy = st.lists(
    st.sampled_from(sorted(HEADER_VALUES)).flatmap(
        lambda name: header_values[name].map(lambda value: (name.encode(), value.encode("latin-1")))
    ),
    max_size=7,
)

paths = st.one_of(
    st.builds(
        lambda prefix, pieces: prefix + "/".join(pieces),
        st.sampled_from(PREFIXES),
        st.lists(st.sampled_from(PATH_PIECES), max_size=4),
    ),
    st.sampled_from(["/healthz/", "/healthz/x", "/healthz%00", "/", ""]),
)
query_pairs = st.lists(
    st.tuples(st.sampled_from(QUERY_KEYS), st.sampled_from(QUERY_VALUES) | st.text(max_size=10)),
    max_size=4,
).map(lambda pairs: "&".join(f"{key}={quote(value, safe='%=&')}" for key, value in pairs))
queries = query_pairs | st.text(
    alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=30
)


def _target(path: str, query: str) -> str:
    # The request target is ASCII on the wire; percent-encode the rest.
    target = quote(path, safe="/%;~:@!$&'()*+,={}") or "/"
    return f"{target}?{query}" if query else target


targets = st.builds(_target, paths, queries)

bodies = st.one_of(
    st.binary(max_size=200),
    st.sampled_from(
        [b"", b"[]", b"[", b"{}", b"[[1,2],[3,4]]", b"[[[1]]]", b'"x"', b"NaN", b"\xff\xfe"]
    ),
    st.just(b"{big}"),
)


# -- the property ------------------------------------------------------------


@pytest.fixture(scope="module")
def served(settings_factory: Callable[..., Settings]) -> Iterator[tuple[TestClient[Any], Any]]:
    """The served ASGI app, started once, and a client whose portal runs it."""
    app = asgi_app(
        create_app(
            settings_factory(
                server=ServerSection(
                    long_poll_timeout_secs=0.05,
                    sse_reconnect_interval_secs=0.05,
                    read_chunk_bytes=1024,
                ),
                limits=LimitsSection(max_retained_bytes=64 * 1024),
            )
        )
    )
    with TestClient(app, base_url="http://testserver.local") as client:  # type: ignore[arg-type]
        yield client, app


@dataclass(frozen=True)
class Request:
    method: str
    target: str
    headers: list[tuple[bytes, bytes]]
    body: bytes


requests = st.builds(
    Request, method=st.sampled_from(METHODS), target=targets, headers=headers_strategy, body=bodies
)

# Sometimes the example starts by creating {ns}/a, so later requests meet a real stream.
setups = st.none() | st.builds(
    Request,
    method=st.just("PUT"),
    target=st.just("/v1/stream/{ns}/a"),
    headers=st.lists(
        st.sampled_from(
            [
                (b"content-type", b"text/plain"),
                (b"content-type", b"application/json"),
                (b"stream-closed", b"true"),
                (b"stream-ttl", b"60"),
            ]
        ),
        max_size=2,
        unique_by=lambda header: header[0],
    ),
    body=st.sampled_from([b"", b"[1]", b"abc"]),
)

_namespaces = itertools.count()
BIG = "a" * 70_000  # beyond the 64 KiB stream limit of the app under test


def fill_body(body: bytes) -> bytes:
    return BIG.encode() if body == b"{big}" else body


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(setup=setups, sequence=st.lists(requests, min_size=1, max_size=3))
def test_malformed_requests_never_fail_the_server(
    served: tuple[TestClient[Any], Any], setup: Request | None, sequence: list[Request]
) -> None:
    client, app = served
    portal = client.blocking_portal
    ns = f"n{next(_namespaces)}"

    def fill(text: str) -> str:
        return text.replace("{ns}", ns).replace("{digits}", "9" * 9000).replace("{big}", BIG)

    for request in [setup, *sequence] if setup else sequence:
        headers = [
            (name, fill(value.decode("latin-1")).encode("latin-1"))
            for name, value in request.headers
        ]
        reply = portal.call(
            call, app, request.method, fill(request.target), headers, fill_body(request.body)
        )
        assert reply.status is not None, "no response"
        assert reply.status < 500, reply.body[:300]
        assert b"x-content-type-options" in {name.lower() for name, _ in reply.headers}
    health = portal.call(call, app, "GET", "/healthz", [], b"")
    assert (health.status, health.body) == (200, b"ok\n")

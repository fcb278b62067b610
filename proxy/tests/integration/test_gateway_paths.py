"""Path normalisation at the gateway: Envoy and ds-server always see one path.

jwt_authn exemptions (the subscription callback endpoints) are matched
against the path Envoy forwards, so an encoding that Envoy and the server
read differently could slip a request past authentication. Requests are
sent over raw sockets: HTTP clients normalise paths themselves.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass

import pytest
from ds_proxy.tokens import bucket_token
from gateway_stack import REQUEST_ID, GatewayStack, bearer, tag

EXEMPT = "/v1/stream/__ds/subscriptions/{}/ack"


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    reached_server: bool
    path_seen: str | None


def send_raw(
    stack: GatewayStack, method: str, target: str, headers: dict[str, str] | None = None
) -> Answer:
    """One HTTP/1.1 request with ``target`` exactly as written, through Envoy."""
    request_id, _ = tag()
    extra = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
    head = (
        f"{method} {target} HTTP/1.1\r\nHost: gateway\r\n{REQUEST_ID}: {request_id}\r\n"
        f"{extra}Content-Length: 0\r\nConnection: close\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", stack.listen_port), timeout=10) as conn:
        conn.sendall(head.encode("latin-1"))
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    status_line, _, rest = data.partition(b"\r\n")
    # The recorder writes before the app runs: on record once answered.
    seen = stack.seen(request_id, timeout=0.0)
    return Answer(
        status=int(status_line.split()[1]),
        body=rest.partition(b"\r\n\r\n")[2],
        reached_server=seen is not None,
        path_seen=seen.path if seen is not None else None,
    )


@pytest.mark.parametrize(
    "segment",
    [
        "a%2F..%2F..%2Fother%2Fs",
        "a%2f..%2f..%2fother%2fs",
        "a%5C..%5C..%5Cother%5Cs",
        "a%5c..%5c..%5cother%5cs",
        "x%2Fy",
    ],
)
def test_escaped_slashes_are_unescaped_before_exemptions_match(
    stack: GatewayStack, segment: str
) -> None:
    answer = send_raw(stack, "POST", EXEMPT.format(segment))
    # Unescaped and resolved, the path is no longer exempt: no token, no entry.
    assert answer.status == 401
    assert b"Jwt is missing" in answer.body
    assert not answer.reached_server


def test_an_escaped_slash_reaches_the_server_as_a_slash(stack: GatewayStack) -> None:
    # The protocol names a stream as one escaped segment here.
    target = "/v1/stream/__ds/subscriptions/s1/streams/chat%2Froom-1"
    answer = send_raw(
        stack, "DELETE", target, bearer(bucket_token("ops", read=("*",), write=("*",)))
    )
    assert answer.reached_server
    assert answer.path_seen == "/v1/stream/__ds/subscriptions/s1/streams/chat/room-1"


@pytest.mark.parametrize(
    "target",
    [
        # Each would leave the exempt endpoint once dot segments are resolved.
        "/v1/stream/__ds/subscriptions/a/../../other/s/ack",
        "/v1/stream/__ds/subscriptions/a/%2e%2e/%2E%2E/other/s/ack",
        "/v1/stream/__ds/subscriptions/a/.%2e/.%2E/other/s/ack",
        "/v1/stream/__ds/subscriptions/a\\..\\..\\other\\s/ack",
        "/v1/stream/__ds/subscriptions/x/ack/../../../../chat/s",
    ],
)
def test_dot_segments_are_resolved_before_exemptions_match(
    stack: GatewayStack, target: str
) -> None:
    answer = send_raw(stack, "POST", target)
    # Resolved, the path is no longer exempt: no token, no entry.
    assert answer.status == 401
    assert b"Jwt is missing" in answer.body
    assert not answer.reached_server


@pytest.mark.parametrize(
    "target",
    [
        "/v1/stream/__ds/subscriptions/x//ack",
        "/v1/stream/__ds//subscriptions/x/ack",
        "/v1/stream/%5F%5Fds/subscriptions/x/ack",
        "/v1/stream/__ds/subscriptions/x/%61ck",
        "/v1/stream/__ds/subscriptions/x/./ack",
    ],
)
def test_an_exempt_path_reaches_the_server_as_envoy_matched_it(
    stack: GatewayStack, target: str
) -> None:
    answer = send_raw(stack, "POST", target)
    assert answer.reached_server
    assert answer.path_seen == EXEMPT.format("x")
    # The server checks the callback token itself: none was sent.
    assert answer.status == 401


def test_a_normalised_path_is_authorized_on_the_stream_it_names(stack: GatewayStack) -> None:
    # "../" out of one bucket into another is resolved before anything looks at
    # the bucket: the token is checked against the bucket the path finally names.
    token = bucket_token("climber", read=("mine",), write=("mine",))
    answer = send_raw(stack, "GET", "/v1/stream/mine/../theirs/s?offset=-1", bearer(token))
    assert answer.status == 403
    assert answer.path_seen == "/v1/stream/theirs/s"


def test_escaped_slashes_are_unescaped_before_dot_segments_are_resolved(
    stack: GatewayStack,
) -> None:
    token = bucket_token("climber", read=("mine",), write=("mine",))
    answer = send_raw(stack, "GET", "/v1/stream/mine%2F..%2Ftheirs/s?offset=-1", bearer(token))
    assert answer.status == 403
    assert answer.path_seen == "/v1/stream/theirs/s"

"""Identity forwarding: what the server learns about the caller, and from whom.

Only the gateway may set identity headers: anything a client sends under
``X-JWT-*`` is removed, and the verified payload (``X-JWT-Payload``) is the
one identity header the server receives. The writer identity that scopes
Stream-Seq is the payload's sub, set by the server itself.
"""

from __future__ import annotations

import base64
import json

import httpx
import pytest
from ds_proxy.tokens import bucket_token
from gateway_stack import ADMIN, GatewayStack, bearer, tag, unique

TEXT = {"Content-Type": "text/plain"}


@pytest.fixture(scope="module")
def stream(stack: GatewayStack) -> str:
    path = f"/v1/stream/{unique('id')}/s"
    with httpx.Client(base_url=stack.url) as http:
        assert http.put(path, headers={**bearer(ADMIN), **TEXT}).status_code == 201
    return path


def _bucket(path: str) -> str:
    return path.split("/")[3]


def _decode(payload: str) -> dict[str, object]:
    claims: dict[str, object] = json.loads(
        base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    )
    return claims


def test_server_receives_the_verified_sub_and_payload(
    stack: GatewayStack, client: httpx.Client, stream: str
) -> None:
    bucket = _bucket(stream)
    token = bucket_token("alice", read=(bucket,), write=(bucket,))
    request_id, headers = tag()
    response = client.get(stream, params={"offset": "-1"}, headers={**headers, **bearer(token)})
    assert response.status_code == 200
    seen = stack.seen(request_id)
    assert seen is not None
    assert seen.all("X-JWT-Sub") == []
    payload = seen.one("X-JWT-Payload")
    assert payload is not None
    claims = _decode(payload)
    assert claims["sub"] == "alice"
    assert claims["ds"] == {"read": [bucket], "write": [bucket]}
    assert seen.all("Authorization") == []


@pytest.mark.parametrize(
    "forged_headers",
    [
        {"X-JWT-Sub": "mallory"},
        {"x-jwt-sub": "mallory", "X-Jwt-Payload": "eyJzdWIiOiJtYWxsb3J5In0"},
        {
            "X-JWT-Payload": base64.urlsafe_b64encode(
                b'{"sub":"alice","ds":{"read":["*"]}}'
            ).decode()
        },
        {"X-JWT-Anything": "x", "X-JWT-Email": "root@example.com"},
    ],
    ids=["sub", "sub+payload", "payload", "other-claim-headers"],
)
def test_client_sent_identity_headers_never_reach_the_server(
    forged_headers: dict[str, str], stack: GatewayStack, client: httpx.Client, stream: str
) -> None:
    bucket = _bucket(stream)
    token = bucket_token("alice", read=(bucket,))
    request_id, headers = tag()
    response = client.get(
        stream, params={"offset": "-1"}, headers={**headers, **forged_headers, **bearer(token)}
    )
    assert response.status_code == 200
    seen = stack.seen(request_id)
    assert seen is not None
    x_jwt = sorted(name for name, _ in seen.headers if name.startswith("x-jwt-"))
    assert x_jwt == ["x-jwt-payload"]
    assert _decode(seen.one("X-JWT-Payload") or "")["sub"] == "alice"


def test_forged_identity_headers_alone_do_not_authenticate(
    stack: GatewayStack, client: httpx.Client, stream: str
) -> None:
    request_id, headers = tag()
    forged = base64.urlsafe_b64encode(b'{"sub":"root","ds":{"read":["*"]}}').decode()
    response = client.get(
        stream,
        params={"offset": "-1"},
        headers={**headers, "X-JWT-Sub": "root", "X-JWT-Payload": forged},
    )
    assert response.status_code == 401
    assert not stack.reached_server(request_id)


def test_underscore_spellings_are_dropped(
    stack: GatewayStack, client: httpx.Client, stream: str
) -> None:
    bucket = _bucket(stream)
    request_id, headers = tag()
    response = client.get(
        stream,
        params={"offset": "-1"},
        headers={**headers, **bearer(bucket_token("alice", read=(bucket,))), "X_JWT_Sub": "root"},
    )
    assert response.status_code == 200
    seen = stack.seen(request_id)
    assert seen is not None
    assert seen.all("x_jwt_sub") == []


def test_stream_seq_is_scoped_per_sub(client: httpx.Client, stream: str) -> None:
    """Protocol section 5.2: Stream-Seq ordering is per writer identity (X-JWT-Sub)."""
    bucket = _bucket(stream)
    alice = bucket_token("alice", write=(bucket,))
    bob = bucket_token("bob", write=(bucket,))

    def append(token: str, seq: str, **extra: str) -> int:
        headers = {**bearer(token), **TEXT, "Stream-Seq": seq, **extra}
        return client.post(stream, headers=headers, content=seq.encode()).status_code

    assert append(alice, "0005") == 204
    # Bob's sequence is his own: lower than Alice's last and still accepted.
    assert append(bob, "0001") == 204
    assert append(bob, "0002") == 204
    # Each writer's own order is enforced.
    assert append(alice, "0003") == 409
    assert append(bob, "0002") == 409
    assert append(alice, "0006") == 204
    # A forged X-JWT-Sub cannot borrow another writer's (or a fresh) sequence.
    assert append(alice, "0004", **{"X-JWT-Sub": "carol"}) == 409


@pytest.mark.parametrize("sub", ["josé", "Łukasz Żółw", "用户-7", "👩‍💻"])
def test_non_ascii_subs_are_accepted(
    sub: str, stack: GatewayStack, client: httpx.Client, stream: str
) -> None:
    bucket = _bucket(stream)
    token = bucket_token(sub, read=(bucket,), write=(bucket,))
    request_id, headers = tag()
    response = client.get(stream, params={"offset": "-1"}, headers={**headers, **bearer(token)})
    assert response.status_code == 200, response.text
    seen = stack.seen(request_id)
    assert seen is not None
    assert _decode(seen.one("X-JWT-Payload") or "")["sub"] == sub


def test_non_ascii_subs_are_distinct_writers(client: httpx.Client, stream: str) -> None:
    bucket = _bucket(stream)

    def append(sub: str, seq: str) -> int:
        token = bucket_token(sub, write=(bucket,))
        headers = {**bearer(token), **TEXT, "Stream-Seq": seq}
        return client.post(stream, headers=headers, content=seq.encode()).status_code

    assert append("josé", "0009") == 204
    # "josé" and "jose" (and its latin-1 misreading "josÃ©") are other writers.
    assert append("jose", "0001") == 204
    assert append("josÃ©", "0001") == 204
    assert append("josé", "0009") == 409


@pytest.mark.parametrize("sub", ["line\nbreak", "tab\there", "bell\x07", "nul\x00", "del\x7f"])
def test_subs_with_control_characters_get_a_clear_401(
    sub: str, client: httpx.Client, stream: str
) -> None:
    bucket = _bucket(stream)
    token = bucket_token(sub, read=(bucket,))
    response = client.get(stream, params={"offset": "-1"}, headers=bearer(token))
    assert response.status_code == 401
    assert response.text == "the token's sub contains control characters\n"

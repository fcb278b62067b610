"""Authentication at the gateway: which tokens Envoy lets through, and with what status.

Each case runs against a read (GET) and a write (POST) of an existing stream;
the token grants every bucket, so only authentication can fail.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import httpx
import pytest
from ds_proxy import forged
from ds_proxy.tokens import (
    TokenSpec,
    expired,
    mint,
    not_yet_valid,
    wrong_audience,
    wrong_issuer,
)
from gateway_stack import ADMIN, GatewayStack, bearer, tag, unique

if TYPE_CHECKING:
    from collections.abc import Callable

SPEC = TokenSpec(sub="auth-case")

# case -> (Authorization header value or None, expected status from Envoy)
REJECTED: dict[str, tuple[Callable[[], str | None], int]] = {
    "no token": (lambda: None, 401),
    "expired": (lambda: "Bearer " + mint(expired(SPEC)), 401),
    "not yet valid": (lambda: "Bearer " + mint(not_yet_valid(SPEC)), 401),
    "wrong issuer": (lambda: "Bearer " + mint(wrong_issuer(SPEC)), 401),
    "wrong audience": (lambda: "Bearer " + mint(wrong_audience(SPEC)), 403),
    "bad signature": (lambda: "Bearer " + forged.bad_signature(SPEC), 401),
    "alg none": (lambda: "Bearer " + forged.alg_none(SPEC), 401),
    "HS256 keyed with the public key": (
        lambda: "Bearer " + forged.hs256_with_public_key(SPEC),
        401,
    ),
    "malformed": (lambda: "Bearer " + forged.malformed(SPEC), 401),
    "another keypair": (lambda: "Bearer " + forged.other_key(SPEC), 401),
    "no exp claim": (lambda: "Bearer " + mint(dataclasses.replace(SPEC, expires_in=None)), 401),
    "not a Bearer scheme": (lambda: "Token " + mint(SPEC), 401),
    "Bearer without a token": (lambda: "Bearer", 401),
}


@pytest.fixture(scope="module")
def stream(stack: GatewayStack) -> str:
    path = f"/v1/stream/{unique('auth')}/s"
    with httpx.Client(base_url=stack.url) as http:
        created = http.put(path, headers={**bearer(ADMIN), "Content-Type": "text/plain"})
        assert created.status_code == 201
        appended = http.post(
            path, headers={**bearer(ADMIN), "Content-Type": "text/plain"}, content=b"hello"
        )
        assert appended.status_code == 204
    return path


def _send(client: httpx.Client, method: str, path: str, headers: dict[str, str]) -> httpx.Response:
    if method == "GET":
        return client.get(path, params={"offset": "-1"}, headers=headers)
    return client.post(path, headers={**headers, "Content-Type": "text/plain"}, content=b"more")


@pytest.mark.parametrize("method", ["GET", "POST"])
@pytest.mark.parametrize("case", sorted(REJECTED))
def test_rejected_tokens_never_reach_the_server(
    case: str, method: str, stack: GatewayStack, client: httpx.Client, stream: str
) -> None:
    make, status = REJECTED[case]
    request_id, headers = tag()
    authorization = make()
    if authorization is not None:
        headers["Authorization"] = authorization
    response = _send(client, method, stream, headers)
    assert response.status_code == status, response.text
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert not stack.reached_server(request_id)


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_valid_token_passes_and_the_server_sees_its_sub(
    method: str, stack: GatewayStack, client: httpx.Client, stream: str
) -> None:
    request_id, headers = tag()
    token = mint(dataclasses.replace(SPEC, sub="alice"))
    response = _send(client, method, stream, {**headers, **bearer(token)})
    assert response.status_code == (200 if method == "GET" else 204), response.text
    seen = stack.seen(request_id)
    assert seen is not None
    claims = seen.claims()
    assert claims is not None
    assert claims["sub"] == "alice"
    # The token itself stops at the gateway.
    assert seen.all("Authorization") == []


def test_expiry_within_the_clock_skew_is_accepted(client: httpx.Client, stream: str) -> None:
    # exp 10 s ago: inside the gateway's 30 s clock skew.
    token = mint(dataclasses.replace(SPEC, not_before=-3600, expires_in=-10))
    response = client.get(stream, params={"offset": "-1"}, headers=bearer(token))
    assert response.status_code == 200


def test_token_without_sub_is_refused_by_the_server(
    stack: GatewayStack, client: httpx.Client, stream: str
) -> None:
    # Envoy accepts it (sub is optional in JWT); the server needs a writer identity.
    request_id, headers = tag()
    token = mint(dataclasses.replace(SPEC, sub=None))
    response = client.get(stream, params={"offset": "-1"}, headers={**headers, **bearer(token)})
    assert response.status_code == 401
    assert "sub" in response.text
    assert stack.reached_server(request_id)


def test_healthz_needs_no_token(client: httpx.Client) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.text.strip() == "ok"


def test_healthz_ignores_a_bad_token(client: httpx.Client) -> None:
    response = client.get("/healthz", headers={"Authorization": "Bearer garbage"})
    assert response.status_code == 200


def test_cors_preflight_needs_no_token(client: httpx.Client, stream: str) -> None:
    response = client.options(
        stream,
        headers={
            "Origin": "https://app.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization,content-type",
        },
    )
    assert response.status_code in (200, 204)
    assert response.headers.get("access-control-allow-origin") in ("*", "https://app.example")


@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "BeArEr", "Bearer  ", "bearer   "])
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_the_bearer_scheme_is_case_insensitive(
    scheme: str, method: str, stack: GatewayStack, client: httpx.Client, stream: str
) -> None:
    # RFC 9110 section 11.1: authentication schemes are case-insensitive.
    request_id, headers = tag()
    authorization = f"{scheme.strip()}{scheme[len(scheme.strip()) :] or ' '}{mint(SPEC)}"
    response = _send(client, method, stream, {**headers, "Authorization": authorization})
    assert response.status_code == (200 if method == "GET" else 204), response.text
    seen = stack.seen(request_id)
    assert seen is not None
    assert seen.all("Authorization") == []


def test_the_access_log_escapes_what_a_token_carries(
    stack: GatewayStack, client: httpx.Client, stream: str
) -> None:
    # A sub is any string its issuer signed: it must not be able to forge log lines.
    sub = 'mallory\n[2026-01-01T00:00:00Z] "GET /forged HTTP/1.1" 200'
    client.get(
        stream, params={"offset": "-1"}, headers=bearer(mint(dataclasses.replace(SPEC, sub=sub)))
    )
    entry = stack.access_log_entry(lambda entry: entry["sub"] == sub)
    assert entry["status"] == 401  # the server refuses such a sub, clearly
    # The newline stayed inside one JSON line: no line begins with the forged text.
    assert not any(line.startswith("[2026-01-01") for line in stack.access_log_lines())


class TestQueryToken:
    """``?access_token=``: accepted on GET only (EventSource), never forwarded."""

    def test_get_accepts_it_and_the_server_never_sees_it(
        self, stack: GatewayStack, client: httpx.Client, stream: str
    ) -> None:
        request_id, headers = tag()
        token = mint(dataclasses.replace(SPEC, sub="query-reader"))
        response = client.get(
            stream, params={"offset": "-1", "access_token": token}, headers=headers
        )
        assert response.status_code == 200
        seen = stack.seen(request_id)
        assert seen is not None
        assert "access_token" not in seen.query
        assert "offset=-1" in seen.query
        claims = seen.claims()
        assert claims is not None
        assert claims["sub"] == "query-reader"

    def test_sse_accepts_it(self, client: httpx.Client, stream: str) -> None:
        token = mint(SPEC)
        params = {"offset": "-1", "live": "sse", "access_token": token}
        with client.stream("GET", stream, params=params) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")

    @pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "HEAD"])
    def test_other_methods_refuse_it(
        self, method: str, stack: GatewayStack, client: httpx.Client, stream: str
    ) -> None:
        request_id, headers = tag()
        response = client.request(
            method,
            stream,
            params={"access_token": mint(SPEC)},
            headers={**headers, "Content-Type": "text/plain"},
            content=b"x" if method in ("POST", "PUT") else None,
        )
        assert response.status_code == 401
        assert not stack.reached_server(request_id)

    def test_an_invalid_one_is_rejected(self, client: httpx.Client, stream: str) -> None:
        params = {"offset": "-1", "access_token": mint(expired(SPEC))}
        assert client.get(stream, params=params).status_code == 401


def test_expiry_beyond_the_clock_skew_is_rejected(client: httpx.Client, stream: str) -> None:
    token = mint(dataclasses.replace(SPEC, not_before=-3600, expires_in=-45))
    assert client.get(stream, params={"offset": "-1"}, headers=bearer(token)).status_code == 401

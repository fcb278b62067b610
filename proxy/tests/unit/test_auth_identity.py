"""ds_server.auth.identity: reading the gateway's forwarded identity."""

from __future__ import annotations

import base64
import json

import pytest
from ds_server.auth import Access, InvalidIdentity, MalformedScopes, Mode, identity_from_headers
from ds_server.auth.identity import decode_payload


def payload(claims: object, *, pad: bool = False) -> bytes:
    encoded = base64.urlsafe_b64encode(json.dumps(claims).encode())
    return encoded if pad else encoded.rstrip(b"=")


def headers(claims: object, sub: str | None = "alice") -> list[tuple[bytes, bytes]]:
    raw = [(b"x-jwt-payload", payload(claims))]
    if sub is not None:
        raw.append((b"x-jwt-sub", sub.encode()))
    return raw


def test_identity_from_a_gateway_request() -> None:
    identity = identity_from_headers(
        headers({"sub": "alice", "ds": {"read": ["chat"]}}), scope_claim="ds"
    )
    assert identity.sub == "alice"
    assert identity.scopes.allows(Access("chat", Mode.READ))


def test_custom_scope_claim() -> None:
    claims = {"sub": "alice", "https://example.com/ds": {"write": ["*"]}}
    identity = identity_from_headers(headers(claims), scope_claim="https://example.com/ds")
    assert identity.scopes.allows(Access("x", Mode.WRITE))


@pytest.mark.parametrize("pad", [False, True])
def test_payload_padding_is_optional(pad: bool) -> None:
    assert decode_payload(payload({"sub": "a"}, pad=pad)) == {"sub": "a"}


def test_no_payload_means_no_verified_token() -> None:
    with pytest.raises(InvalidIdentity, match="no verified token"):
        identity_from_headers([(b"x-jwt-sub", b"alice")], scope_claim="ds")


def test_two_payloads_are_ambiguous() -> None:
    raw = [*headers({"sub": "alice"}), (b"x-jwt-payload", payload({"sub": "root"}))]
    with pytest.raises(InvalidIdentity, match="ambiguous"):
        identity_from_headers(raw, scope_claim="ds")


@pytest.mark.parametrize("sub", [None, "mallory"])
def test_sub_header_must_match_the_payload(sub: str | None) -> None:
    with pytest.raises(InvalidIdentity, match="X-JWT-Sub"):
        identity_from_headers(headers({"sub": "alice"}, sub=sub), scope_claim="ds")


def test_two_sub_headers_are_refused() -> None:
    raw = [*headers({"sub": "alice"}), (b"x-jwt-sub", b"alice")]
    with pytest.raises(InvalidIdentity):
        identity_from_headers(raw, scope_claim="ds")


@pytest.mark.parametrize("claims", [{}, {"sub": ""}, {"sub": 7}])
def test_a_sub_is_required(claims: dict[str, object]) -> None:
    with pytest.raises(InvalidIdentity, match="sub"):
        identity_from_headers(headers(claims, sub=""), scope_claim="ds")


@pytest.mark.parametrize("raw", [b"!!!", b"bm90IGpzb24", payload([1, 2])])
def test_undecodable_payloads(raw: bytes) -> None:
    with pytest.raises(InvalidIdentity):
        decode_payload(raw)


def test_malformed_scopes_propagate() -> None:
    with pytest.raises(MalformedScopes):
        identity_from_headers(headers({"sub": "alice", "ds": ["chat"]}), scope_claim="ds")

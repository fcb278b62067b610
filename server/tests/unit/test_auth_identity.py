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


def headers(claims: object) -> list[tuple[bytes, bytes]]:
    return [(b"x-jwt-payload", payload(claims))]


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


@pytest.mark.parametrize("sub", ["josé", "Łukasz", "用户", "👩‍💻"])
def test_non_ascii_subs_arrive_as_utf8(sub: str) -> None:
    # Envoy forwards the claim's UTF-8 bytes unchanged.
    identity = identity_from_headers(headers({"sub": sub}), scope_claim="ds")
    assert identity.sub == sub


@pytest.mark.parametrize("sub", ["a\nb", "tab\there", "nul\x00", "del\x7f", "c1\x85"])
def test_subs_with_control_characters_are_refused(sub: str) -> None:
    with pytest.raises(InvalidIdentity, match="control characters"):
        identity_from_headers(headers({"sub": sub}), scope_claim="ds")


@pytest.mark.parametrize("claims", [{}, {"sub": ""}, {"sub": 7}])
def test_a_sub_is_required(claims: dict[str, object]) -> None:
    with pytest.raises(InvalidIdentity, match="sub"):
        identity_from_headers(headers(claims), scope_claim="ds")


@pytest.mark.parametrize("raw", [b"!!!", b"bm90IGpzb24", payload([1, 2])])
def test_undecodable_payloads(raw: bytes) -> None:
    with pytest.raises(InvalidIdentity):
        decode_payload(raw)


def test_malformed_scopes_propagate() -> None:
    with pytest.raises(MalformedScopes):
        identity_from_headers(headers({"sub": "alice", "ds": ["chat"]}), scope_claim="ds")


def test_a_sub_header_is_not_an_identity() -> None:
    # Only the payload counts: a stray X-JWT-Sub changes nothing.
    raw = [*headers({"sub": "alice"}), (b"x-jwt-sub", b"mallory")]
    assert identity_from_headers(raw, scope_claim="ds").sub == "alice"


def test_a_sub_with_lone_surrogates_is_refused() -> None:
    # Not UTF-8 once decoded: the JSON decoder refuses the payload outright.
    raw = [(b"x-jwt-payload", base64.urlsafe_b64encode(b'{"sub": "a\\ud800b"}'))]
    with pytest.raises(InvalidIdentity, match="not base64url JSON"):
        identity_from_headers(raw, scope_claim="ds")

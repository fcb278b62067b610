"""Webhook signatures: Ed25519 over "<t>.<body>", verifiable with the published JWK."""

from __future__ import annotations

import base64
import re

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from ds_server.subscriptions.signing import SigningKey, b64url

# The header format the conformance suite's receiver accepts.
HEADER_RE = re.compile(r"^t=(\d+),kid=([^,]+),ed25519=([A-Za-z0-9_-]+)$")


def _b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _verify(jwks: dict[str, list[dict[str, str]]], header: str, body: bytes) -> None:
    match = HEADER_RE.fullmatch(header)
    assert match is not None
    timestamp, kid, signature = match.groups()
    (jwk,) = [key for key in jwks["keys"] if key["kid"] == kid]
    public = Ed25519PublicKey.from_public_bytes(_b64url_decode(jwk["x"]))
    public.verify(_b64url_decode(signature), f"{timestamp}.".encode() + body)


def test_signature_verifies_with_the_published_jwk() -> None:
    key = SigningKey.generate()
    body = b'{"subscription_id":"s","streams":[]}'
    header = key.signature_header(body, 1_732_500_000)
    assert header.startswith("t=1732500000,kid=ds_")
    _verify(key.jwks(), header, body)


def test_signature_does_not_verify_for_other_bytes() -> None:
    key = SigningKey.generate()
    header = key.signature_header(b"{}", 1_732_500_000)
    with pytest.raises(InvalidSignature):
        _verify(key.jwks(), header, b"{} ")


def test_jwk_shape_and_kid() -> None:
    key = SigningKey.generate()
    (jwk,) = key.jwks()["keys"]
    assert jwk["kty"] == "OKP"
    assert jwk["crv"] == "Ed25519"
    assert jwk["alg"] == "EdDSA"
    assert jwk["use"] == "sig"
    assert jwk["kid"] == key.kid
    assert key.kid.startswith("ds_")
    assert "," not in key.kid
    assert "=" not in jwk["x"]
    assert len(_b64url_decode(jwk["x"])) == 32


def test_kid_is_stable_for_a_key() -> None:
    key = SigningKey.generate()
    assert SigningKey.from_private_key(key.private_key).kid == key.kid
    assert SigningKey.generate().kid != key.kid


def test_b64url_has_no_padding() -> None:
    assert b64url(b"\xff\xfe") == "__4"

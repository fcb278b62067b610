"""ds_proxy.keys and the committed test-only key material."""

from __future__ import annotations

import json

from ds_proxy.keys import (
    TEST_JWKS,
    TEST_KID,
    TEST_PUBLIC_KEY,
    jwk_for,
    jwks_for,
    jwks_json,
    load_private_key,
    public_pem,
)


def test_committed_public_key_and_jwks_match_the_private_key() -> None:
    key = load_private_key()
    assert TEST_PUBLIC_KEY.read_bytes() == public_pem(key)
    assert json.loads(TEST_JWKS.read_text()) == jwks_for(key)


def test_jwk_is_pinned_to_rs256() -> None:
    jwk = jwk_for(load_private_key())
    assert jwk["alg"] == "RS256"
    assert jwk["kty"] == "RSA"
    assert jwk["use"] == "sig"
    assert jwk["kid"] == TEST_KID
    assert jwk["e"] == "AQAB"


def test_jwks_json_is_compact() -> None:
    text = jwks_json(load_private_key())
    assert " " not in text
    assert json.loads(text)["keys"][0]["kid"] == TEST_KID

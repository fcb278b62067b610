"""ds_proxy.tokens: minted tokens carry exactly the claims the gateway checks."""

from __future__ import annotations

from typing import Any

import jwt
import pytest
from ds_proxy.keys import TEST_KID, load_private_key
from ds_proxy.tokens import (
    KINDS,
    TEST_AUDIENCE,
    TEST_ISSUER,
    TokenSpec,
    bucket_token,
    mint,
)

NOW = 1_800_000_000
PUBLIC = load_private_key().public_key()


def decode(token: str, **options: Any) -> dict[str, Any]:
    claims: dict[str, Any] = jwt.decode(
        token,
        PUBLIC,
        algorithms=["RS256"],
        audience=TEST_AUDIENCE,
        issuer=TEST_ISSUER,
        options={"verify_exp": False, "verify_nbf": False, "verify_iat": False, **options},
    )
    return claims


def test_default_token() -> None:
    token = mint(now=NOW)
    header = jwt.get_unverified_header(token)
    assert header == {"alg": "RS256", "kid": TEST_KID, "typ": "JWT"}
    assert decode(token) == {
        "iss": TEST_ISSUER,
        "aud": TEST_AUDIENCE,
        "sub": "test-user",
        "iat": NOW,
        "nbf": NOW,
        "exp": NOW + 3600,
        "ds": {"read": ["*"], "write": ["*"]},
    }


def test_a_fresh_token_verifies_with_the_clock() -> None:
    assert decode(mint(), verify_exp=True, verify_nbf=True)["sub"] == "test-user"


def test_kinds_move_the_right_claims() -> None:
    spec = TokenSpec()
    expired = KINDS["expired"](spec).claims(NOW)
    assert expired["exp"] < NOW - 30
    assert expired["nbf"] < expired["exp"]
    early = KINDS["not-yet-valid"](spec).claims(NOW)
    assert early["nbf"] > NOW + 30
    assert early["exp"] > early["nbf"]
    assert KINDS["wrong-issuer"](spec).claims(NOW)["iss"] != TEST_ISSUER
    assert KINDS["wrong-audience"](spec).claims(NOW)["aud"] != TEST_AUDIENCE
    assert KINDS["valid"](spec) == spec


def test_optional_claims_can_be_left_out() -> None:
    claims = TokenSpec(sub=None, read=None, write=None, expires_in=None).claims(NOW)
    assert "sub" not in claims
    assert "ds" not in claims
    assert "exp" not in claims


def test_several_audiences() -> None:
    claims = TokenSpec(audience=("a", "b")).claims(NOW)
    assert claims["aud"] == ["a", "b"]


def test_bucket_token() -> None:
    claims = decode(bucket_token("alice", read=("chat",)))
    assert claims["sub"] == "alice"
    assert claims["ds"] == {"read": ["chat"], "write": []}


def test_bucket_token_passes_other_changes() -> None:
    claims = decode(bucket_token("alice", write=("x",), issuer="elsewhere"), verify_iss=False)
    assert claims["iss"] == "elsewhere"


def test_another_key_does_not_verify() -> None:
    from ds_proxy.keys import generate_rsa_key

    with pytest.raises(jwt.InvalidSignatureError):
        decode(mint(key=generate_rsa_key()))

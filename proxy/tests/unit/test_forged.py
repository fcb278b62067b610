"""ds_proxy.forged: each forgery is what it claims to be (and PyJWT refuses it too)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any

import jwt
import pytest
from ds_proxy import forged
from ds_proxy.keys import load_private_key, public_pem
from ds_proxy.tokens import TEST_AUDIENCE

PUBLIC = load_private_key().public_key()


def part(segment: str) -> Any:
    return json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))


def test_alg_none_is_unsigned() -> None:
    header, payload, signature = forged.alg_none().split(".")
    assert part(header)["alg"] == "none"
    assert part(payload)["sub"] == "test-user"
    assert signature == ""


def test_hs256_is_keyed_with_the_public_pem() -> None:
    token = forged.hs256_with_public_key()
    signing_input, _, signature = token.rpartition(".")
    assert part(token.split(".")[0])["alg"] == "HS256"
    expected = hmac.new(public_pem(PUBLIC), signing_input.encode(), hashlib.sha256).digest()
    assert base64.urlsafe_b64encode(expected).rstrip(b"=").decode() == signature


def test_bad_signature_changes_the_payload() -> None:
    token = forged.bad_signature()
    assert part(token.split(".")[1])["sub"] == "admin"


@pytest.mark.parametrize("kind", sorted(forged.FORGERIES))
def test_no_forgery_verifies(kind: str) -> None:
    with pytest.raises(jwt.InvalidTokenError):
        jwt.decode(
            forged.FORGERIES[kind](None), PUBLIC, algorithms=["RS256"], audience=TEST_AUDIENCE
        )

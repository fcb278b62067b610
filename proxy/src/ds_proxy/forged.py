"""Tokens an attacker could send: each must be refused by the gateway.

PyJWT refuses to build some of these (``alg: none`` with a key, an HMAC keyed
with a PEM public key), which is right for a library, so they are assembled by
hand here.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import TYPE_CHECKING, Any

from ds_proxy.keys import TEST_KID, generate_rsa_key, load_private_key, public_pem
from ds_proxy.tokens import TokenSpec, mint

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _segment(value: Mapping[str, Any]) -> str:
    return _b64(json.dumps(value, separators=(",", ":")).encode())


def alg_none(spec: TokenSpec | None = None) -> str:
    """Unsigned: ``{"alg": "none"}`` and an empty signature."""
    claims = (spec or TokenSpec()).claims()
    return f"{_segment({'alg': 'none', 'typ': 'JWT'})}.{_segment(claims)}."


def hs256_with_public_key(spec: TokenSpec | None = None) -> str:
    """HS256 keyed with the gateway's *public* key PEM (the RS/HS confusion attack)."""
    claims = (spec or TokenSpec()).claims()
    header = {"alg": "HS256", "typ": "JWT", "kid": TEST_KID}
    signing_input = f"{_segment(header)}.{_segment(claims)}"
    secret = public_pem(load_private_key())
    mac = hmac.new(secret, signing_input.encode("ascii"), hashlib.sha256).digest()
    return f"{signing_input}.{_b64(mac)}"


def bad_signature(spec: TokenSpec | None = None) -> str:
    """A genuine token whose payload was changed after signing (sub swapped)."""
    token = mint(spec)
    header, _payload, signature = token.split(".")
    claims = (spec or TokenSpec()).claims()
    claims["sub"] = "admin"
    return f"{header}.{_segment(claims)}.{signature}"


def other_key(spec: TokenSpec | None = None) -> str:
    """Well-formed RS256 with the trusted ``kid``, signed by a key the gateway never saw."""
    return mint(spec, key=generate_rsa_key())


def malformed(spec: TokenSpec | None = None) -> str:
    """Not a JWS at all."""
    return "not-a-jwt.at-all"


FORGERIES: dict[str, Callable[[TokenSpec | None], str]] = {
    "alg-none": alg_none,
    "hs256-public-key": hs256_with_public_key,
    "bad-signature": bad_signature,
    "other-key": other_key,
    "malformed": malformed,
}

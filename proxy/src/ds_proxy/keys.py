"""RSA keys and JWKS documents.

The keypair committed under ``proxy/keys/`` is for tests and local development
only: its private half is public, so any token it signs proves nothing.
"""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from ds_proxy.paths import KEYS_DIR

if TYPE_CHECKING:
    from pathlib import Path

TEST_KID = "ds-test-only-1"
TEST_PRIVATE_KEY = KEYS_DIR / "test-only-private.pem"
TEST_PUBLIC_KEY = KEYS_DIR / "test-only-public.pem"
TEST_JWKS = KEYS_DIR / "test-only-jwks.json"


def generate_rsa_key(bits: int = 2048) -> rsa.RSAPrivateKey:
    """A fresh RSA private key (tests use one to sign with a key the gateway does not know)."""
    return rsa.generate_private_key(public_exponent=65537, key_size=bits)


def load_private_key(path: Path = TEST_PRIVATE_KEY) -> rsa.RSAPrivateKey:
    """Load an unencrypted PEM RSA private key."""
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(key, rsa.RSAPrivateKey):
        raise TypeError(f"{path} is not an RSA private key")
    return key


def public_pem(key: rsa.RSAPrivateKey | rsa.RSAPublicKey) -> bytes:
    """The SubjectPublicKeyInfo PEM of ``key``'s public half."""
    public = key.public_key() if isinstance(key, rsa.RSAPrivateKey) else key
    return public.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def _b64_uint(value: int) -> str:
    raw = value.to_bytes((value.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def jwk_for(key: rsa.RSAPrivateKey | rsa.RSAPublicKey, kid: str = TEST_KID) -> dict[str, str]:
    """The public JWK of ``key``, pinned to RS256 so no other algorithm can use it."""
    public = key.public_key() if isinstance(key, rsa.RSAPrivateKey) else key
    numbers = public.public_numbers()
    return {
        "kty": "RSA",
        "use": "sig",
        "alg": "RS256",
        "kid": kid,
        "n": _b64_uint(numbers.n),
        "e": _b64_uint(numbers.e),
    }


def jwks_for(key: rsa.RSAPrivateKey | rsa.RSAPublicKey, kid: str = TEST_KID) -> dict[str, Any]:
    """A JWKS document holding the one public key."""
    return {"keys": [jwk_for(key, kid)]}


def jwks_json(key: rsa.RSAPrivateKey | rsa.RSAPublicKey, kid: str = TEST_KID) -> str:
    """``jwks_for`` serialised compactly, as Envoy's ``local_jwks`` takes it."""
    return json.dumps(jwks_for(key, kid), separators=(",", ":"), sort_keys=True)

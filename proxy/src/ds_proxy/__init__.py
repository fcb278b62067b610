"""The Envoy gateway in front of ds-server: configs, test tokens, running Envoy."""

from __future__ import annotations

from ds_proxy.forged import FORGERIES
from ds_proxy.keys import TEST_KID, generate_rsa_key, jwks_for, load_private_key
from ds_proxy.tokens import KINDS, TEST_AUDIENCE, TEST_ISSUER, TokenSpec, bucket_token, mint

__all__ = [
    "FORGERIES",
    "KINDS",
    "TEST_AUDIENCE",
    "TEST_ISSUER",
    "TEST_KID",
    "TokenSpec",
    "bucket_token",
    "generate_rsa_key",
    "jwks_for",
    "load_private_key",
    "mint",
]

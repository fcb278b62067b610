"""Ed25519 webhook signatures, published as a JWKS.

Receivers verify ``webhook-signature: t=<unix>,kid=<kid>,ed25519=<sig>``
over the bytes ``"<t>." + body`` with the public key named by ``kid``, so
there is no shared secret to hand out or leak. The key must outlive every
subscription that points at it, so it is kept in subscription storage with
them (as raw private-key bytes).
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

SIGNATURE_HEADER = "webhook-signature"
ALGORITHM = "ed25519"
JWKS_CONTENT_TYPE = "application/jwk-set+json"


def b64url(data: bytes) -> str:
    """Base64url without padding, as JOSE and the signature header use it."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@dataclass(frozen=True, slots=True)
class SigningKey:
    """An Ed25519 key pair with its key id and public JWK."""

    private_key: Ed25519PrivateKey
    kid: str
    public_jwk: Mapping[str, str]

    @classmethod
    def generate(cls) -> SigningKey:
        """A fresh key pair; its kid is ``ds_`` + the RFC 7638 thumbprint."""
        # Imported here: the crypto library adds ~6 MiB to every process, and
        # only a server that signs webhooks needs it.
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        return cls.from_private_key(Ed25519PrivateKey.generate())

    @classmethod
    def from_private_key(cls, private_key: Ed25519PrivateKey) -> SigningKey:
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

        raw = private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        x = b64url(raw)
        # RFC 7638: required members only, sorted, no whitespace.
        canonical = json.dumps({"crv": "Ed25519", "kty": "OKP", "x": x}, separators=(",", ":"))
        kid = "ds_" + b64url(hashlib.sha256(canonical.encode("ascii")).digest())
        jwk = {"kty": "OKP", "crv": "Ed25519", "x": x, "kid": kid, "use": "sig", "alg": "EdDSA"}
        return cls(private_key=private_key, kid=kid, public_jwk=jwk)

    @classmethod
    def from_private_bytes(cls, raw: bytes) -> SigningKey:
        """The key pair whose private key is ``raw`` (32 bytes, as ``private_bytes`` gives)."""
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        return cls.from_private_key(Ed25519PrivateKey.from_private_bytes(raw))

    def private_bytes(self) -> bytes:
        """The private key, raw, for storage."""
        return self.private_key.private_bytes_raw()

    def signature_header(self, body: bytes, timestamp: int) -> str:
        """The ``webhook-signature`` value for ``body`` sent at ``timestamp`` (Unix seconds)."""
        signature = self.private_key.sign(f"{timestamp}.".encode("ascii") + body)
        return f"t={timestamp},kid={self.kid},{ALGORITHM}={b64url(signature)}"

    def jwks(self) -> dict[str, list[dict[str, str]]]:
        """The JSON Web Key Set that publishes the public key."""
        return {"keys": [dict(self.public_jwk)]}

"""Minting test tokens with PyJWT: valid ones, and each way a token can be wrong.

The claims match what the gateway checks (docs/security.md): RS256, ``iss``,
``aud``, ``exp``/``nbf``, ``sub``, and the ``ds`` claim with bucket scopes.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import jwt

from ds_proxy.keys import TEST_KID, load_private_key

if TYPE_CHECKING:
    from collections.abc import Callable

    from cryptography.hazmat.primitives.asymmetric import rsa

TEST_ISSUER = "durable-streams-test"
TEST_AUDIENCE = "durable-streams"
SCOPE_CLAIM = "ds"
ALL_BUCKETS = ("*",)
# Far outside the gateway's 30 s clock skew, so expired means expired.
_OFF_BY_SECS = 600


@dataclass(frozen=True, slots=True)
class TokenSpec:
    """What to put in a token; times are seconds relative to ``now``."""

    sub: str | None = "test-user"
    issuer: str = TEST_ISSUER
    audience: str | tuple[str, ...] = TEST_AUDIENCE
    # None leaves the list out of the scope claim; both None leaves the claim out.
    read: tuple[str, ...] | None = ALL_BUCKETS
    write: tuple[str, ...] | None = ALL_BUCKETS
    not_before: int = 0
    expires_in: int | None = 3600
    scope_claim: str = SCOPE_CLAIM

    def claims(self, now: int | None = None) -> dict[str, Any]:
        """The JWT payload."""
        now = int(time.time()) if now is None else now
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "aud": self.audience if isinstance(self.audience, str) else list(self.audience),
            "iat": now,
            "nbf": now + self.not_before,
        }
        if self.expires_in is not None:
            claims["exp"] = now + self.expires_in
        if self.sub is not None:
            claims["sub"] = self.sub
        scopes: dict[str, list[str]] = {}
        if self.read is not None:
            scopes["read"] = list(self.read)
        if self.write is not None:
            scopes["write"] = list(self.write)
        if scopes:
            claims[self.scope_claim] = scopes
        return claims


def expired(spec: TokenSpec) -> TokenSpec:
    """Valid for an hour, ending ten minutes ago."""
    return dataclasses.replace(spec, not_before=-3600 - _OFF_BY_SECS, expires_in=-_OFF_BY_SECS)


def not_yet_valid(spec: TokenSpec) -> TokenSpec:
    """Valid for an hour, starting in ten minutes."""
    return dataclasses.replace(spec, not_before=_OFF_BY_SECS, expires_in=_OFF_BY_SECS + 3600)


def wrong_issuer(spec: TokenSpec) -> TokenSpec:
    """Signed by the right key but claiming another issuer."""
    return dataclasses.replace(spec, issuer=spec.issuer + "-other")


def wrong_audience(spec: TokenSpec) -> TokenSpec:
    """Meant for another service."""
    return dataclasses.replace(spec, audience="another-service")


def valid(spec: TokenSpec) -> TokenSpec:
    """Unchanged."""
    return spec


KINDS: dict[str, Callable[[TokenSpec], TokenSpec]] = {
    "valid": valid,
    "expired": expired,
    "not-yet-valid": not_yet_valid,
    "wrong-issuer": wrong_issuer,
    "wrong-audience": wrong_audience,
}


def mint(
    spec: TokenSpec | None = None,
    *,
    key: rsa.RSAPrivateKey | None = None,
    kid: str = TEST_KID,
    now: int | None = None,
) -> str:
    """An RS256 token for ``spec``, signed with ``key`` (default: the test-only key)."""
    spec = spec or TokenSpec()
    signing_key = key if key is not None else load_private_key()
    return jwt.encode(spec.claims(now), signing_key, algorithm="RS256", headers={"kid": kid})


def bucket_token(
    sub: str,
    *,
    read: tuple[str, ...] | None = None,
    write: tuple[str, ...] | None = None,
    **changes: Any,
) -> str:
    """Shorthand: a valid token for ``sub`` with the given bucket lists (empty when None)."""
    spec = TokenSpec(sub=sub, read=read or (), write=write or ())
    return mint(dataclasses.replace(spec, **changes) if changes else spec)

"""The caller's identity, as the gateway forwards it after verifying the token.

Envoy's ``jwt_authn`` sets ``X-JWT-Payload`` (the verified payload,
base64url) on every request it lets through and removes any copy a client
sent. The server trusts it only because it listens on loopback behind the
gateway. The ``sub`` comes from the payload too: copied into a header of its
own, a ``sub`` with control characters would be an invalid header value.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import TYPE_CHECKING

import msgspec

from ds_server.auth.scopes import Scopes
from ds_server.protocol import headers as h

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence


class InvalidIdentity(ValueError):
    """The forwarded identity is missing, duplicated, undecodable or inconsistent."""

    def __init__(self, reason: str, *, missing: bool = False) -> None:
        super().__init__(reason)
        # No forwarded identity at all: the request did not come through the gateway.
        self.missing = missing


@dataclass(frozen=True, slots=True)
class Identity:
    """Who is calling and what they may touch."""

    sub: str
    scopes: Scopes
    # The token's ``exp`` (seconds since the epoch); None when it has none.
    expires_at: float | None = None


def identity_from_headers(headers: Iterable[tuple[bytes, bytes]], scope_claim: str) -> Identity:
    """Build the identity from raw ASGI headers; raise ``InvalidIdentity`` when unusable.

    ``MalformedScopes`` propagates: the token is genuine but grants nothing usable.
    """
    payload_name = h.IDENTITY_PAYLOAD.encode()
    payloads = [value for name, value in headers if name.lower() == payload_name]
    return identity_from_payload(single_payload(payloads), scope_claim)


def single_payload(payloads: Sequence[bytes]) -> bytes:
    """The one forwarded payload among a request's copies of the header; raises if not one."""
    if not payloads:
        raise InvalidIdentity("no verified token", missing=True)
    if len(payloads) != 1:
        raise InvalidIdentity("ambiguous token payload")
    return payloads[0]


def identity_from_payload(payload: bytes, scope_claim: str) -> Identity:
    """The identity a forwarded payload (``X-JWT-Payload``'s value) carries; raises as above."""
    claims = decode_payload(payload)
    sub = claims.get("sub")
    if not isinstance(sub, str) or not sub:
        raise InvalidIdentity("the token has no sub claim")
    if any(ord(char) < 0x20 or 0x7F <= ord(char) < 0xA0 for char in sub):
        raise InvalidIdentity("the token's sub contains control characters")
    scopes = Scopes.from_claim(claims.get(scope_claim))
    return Identity(sub=sub, scopes=scopes, expires_at=_expiry(claims.get("exp")))


def _expiry(exp: object) -> float | None:
    # A JSON number (not a boolean); Envoy has already required one and checked it.
    if isinstance(exp, bool) or not isinstance(exp, int | float):
        return None
    return float(exp)


def decode_payload(value: bytes) -> dict[str, object]:
    """Decode a base64url (padded or not) JSON object."""
    try:
        raw = base64.urlsafe_b64decode(value + b"=" * (-len(value) % 4))
        claims = msgspec.json.decode(raw)
    except (binascii.Error, ValueError, msgspec.DecodeError, RecursionError):
        raise InvalidIdentity("the token payload is not base64url JSON") from None
    if not isinstance(claims, dict):
        raise InvalidIdentity("the token payload is not a JSON object")
    return claims

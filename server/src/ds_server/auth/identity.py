"""The caller's identity, as the gateway forwards it after verifying the token.

Envoy's ``jwt_authn`` sets two headers on every request it lets through and
removes any copy a client sent: ``X-JWT-Payload`` (the verified payload,
base64url) and ``X-JWT-Sub`` (its ``sub``). The server trusts them only because
it listens on loopback behind the gateway.
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
    from collections.abc import Iterable


class InvalidIdentity(ValueError):
    """The forwarded identity is missing, duplicated, undecodable or inconsistent."""


@dataclass(frozen=True, slots=True)
class Identity:
    """Who is calling and what they may touch."""

    sub: str
    scopes: Scopes


def identity_from_headers(headers: Iterable[tuple[bytes, bytes]], scope_claim: str) -> Identity:
    """Build the identity from raw ASGI headers; raise ``InvalidIdentity`` when unusable.

    ``MalformedScopes`` propagates: the token is genuine but grants nothing usable.
    """
    payload_name = h.IDENTITY_PAYLOAD.encode()
    sub_name = h.WRITER_IDENTITY.encode()
    payloads: list[bytes] = []
    subs: list[bytes] = []
    for name, value in headers:
        lowered = name.lower()
        if lowered == payload_name:
            payloads.append(value)
        elif lowered == sub_name:
            subs.append(value)
    if len(payloads) != 1:
        raise InvalidIdentity("no verified token" if not payloads else "ambiguous token payload")
    claims = decode_payload(payloads[0])
    sub = claims.get("sub")
    if not isinstance(sub, str) or not sub:
        raise InvalidIdentity("the token has no sub claim")
    # Envoy derives both headers from the same token; a mismatch means the
    # request did not come through the gateway as configured.
    if len(subs) != 1 or subs[0].decode("latin-1") != sub:
        raise InvalidIdentity("X-JWT-Sub does not match the verified token")
    return Identity(sub=sub, scopes=Scopes.from_claim(claims.get(scope_claim)))


def decode_payload(value: bytes) -> dict[str, object]:
    """Decode a base64url (padded or not) JSON object."""
    try:
        raw = base64.urlsafe_b64decode(value + b"=" * (-len(value) % 4))
        claims = msgspec.json.decode(raw)
    except (binascii.Error, ValueError, msgspec.DecodeError):
        raise InvalidIdentity("the token payload is not base64url JSON") from None
    if not isinstance(claims, dict):
        raise InvalidIdentity("the token payload is not a JSON object")
    return claims

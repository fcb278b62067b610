"""Authorization behind the gateway: bucket scopes from the forwarded token claims."""

from __future__ import annotations

from ds_server.auth.access import required_access
from ds_server.auth.gateway import GatewayGuard
from ds_server.auth.identity import Identity, InvalidIdentity, identity_from_headers
from ds_server.auth.scopes import WILDCARD, Access, MalformedScopes, Mode, Scopes

__all__ = [
    "WILDCARD",
    "Access",
    "GatewayGuard",
    "Identity",
    "InvalidIdentity",
    "MalformedScopes",
    "Mode",
    "Scopes",
    "identity_from_headers",
    "required_access",
]

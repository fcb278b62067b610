"""Authorization behind the gateway: bucket scopes from the forwarded token claims."""

from __future__ import annotations

from ds_server.auth.access import required_access
from ds_server.auth.gateway import gateway_auth
from ds_server.auth.identity import Identity, InvalidIdentity, identity_from_headers
from ds_server.auth.scopes import WILDCARD, Access, MalformedScopes, Mode, Scopes

__all__ = [
    "WILDCARD",
    "Access",
    "Identity",
    "InvalidIdentity",
    "MalformedScopes",
    "Mode",
    "Scopes",
    "gateway_auth",
    "identity_from_headers",
    "required_access",
]

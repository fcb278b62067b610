"""The edge's guard enforcing bucket scopes from the gateway's forwarded identity.

Enabled with ``DS_AUTH__MODE=gateway``. Envoy has already authenticated the
request (signature, issuer, audience, exp/nbf); this guard authorizes it:
401 when the forwarded identity is unusable, 403 when the token's scopes do
not cover the buckets the request touches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ds_server.auth.access import required_access
from ds_server.auth.identity import InvalidIdentity, identity_from_headers
from ds_server.auth.scopes import MalformedScopes
from ds_server.edge.http import Reply
from ds_server.protocol import headers as h

if TYPE_CHECKING:
    from litestar.types import HTTPScope

    from ds_server.auth.scopes import Access

_FORKED_FROM = h.STREAM_FORKED_FROM.encode()
_SUB = h.WRITER_IDENTITY.encode()
# A request with no forwarded identity came past the gateway: say where to go.
NO_GATEWAY_HINT = (
    "; send requests through the gateway (Envoy: port 8080 with `make dev`), "
    "which verifies the token and forwards its claims"
)


class GatewayGuard:
    """Lets a request through only with a forwarded identity that grants what it touches."""

    def __init__(self, *, scope_claim: str = "ds") -> None:
        self._scope_claim = scope_claim

    def check(self, scope: HTTPScope) -> Reply | None:
        headers = scope["headers"]
        fork_sources = [
            value.decode("latin-1") for name, value in headers if name.lower() == _FORKED_FROM
        ]
        needed = required_access(scope["method"], scope["path"], fork_sources=fork_sources)
        if not needed:
            return None
        try:
            identity = identity_from_headers(headers, self._scope_claim)
        except InvalidIdentity as exc:
            reason = str(exc) + (NO_GATEWAY_HINT if exc.missing else "")
            return _refusal(401, reason, challenge=True)
        except MalformedScopes as exc:
            return _refusal(403, str(exc))
        denied = next((access for access in needed if not identity.scopes.allows(access)), None)
        if denied is not None:
            return _refusal(403, _denial(denied))
        # The writer identity (Stream-Seq is ordered per writer) is the verified
        # sub, whatever X-JWT-Sub the request carried.
        scope["headers"] = [
            *(item for item in headers if item[0].lower() != _SUB),
            (_SUB, identity.sub.encode("utf-8")),
        ]
        return None


def _denial(access: Access) -> str:
    where = f"bucket {access.bucket!r}" if access.bucket is not None else "every bucket ('*')"
    return f"the token does not grant {access.mode.value} access to {where}"


def _refusal(status: int, reason: str, *, challenge: bool = False) -> Reply:
    headers = {h.CONTENT_TYPE: "text/plain; charset=utf-8", h.CACHE_CONTROL: "no-store"}
    if challenge:
        headers["WWW-Authenticate"] = 'Bearer error="invalid_token"'
    return Reply(status, headers, reason.encode() + b"\n")

"""ASGI middleware enforcing bucket scopes from the gateway's forwarded identity.

Enabled with ``DS_AUTH__MODE=gateway``. Envoy has already authenticated the
request (signature, issuer, audience, exp/nbf); this layer authorizes it: 401
when the forwarded identity is unusable, 403 when the token's scopes do not
cover the buckets the request touches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from ds_server.auth.access import required_access
from ds_server.auth.identity import InvalidIdentity, identity_from_headers
from ds_server.auth.scopes import MalformedScopes
from ds_server.middleware import SECURITY_HEADERS
from ds_server.protocol import headers as h

if TYPE_CHECKING:
    from litestar.types import ASGIApp, HTTPScope, Receive, Scope, Send

    from ds_server.auth.scopes import Access

_FORKED_FROM = h.STREAM_FORKED_FROM.encode()
_SUB = h.WRITER_IDENTITY.encode()


def gateway_auth(app: ASGIApp, *, scope_claim: str = "ds") -> ASGIApp:
    """Wrap ``app`` so HTTP requests pass only with a forwarded identity that grants them."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":  # type: ignore[comparison-overlap]
            # No WebSocket surface is authorized; closing before accept answers 403.
            await send({"type": "websocket.close", "code": 1008, "reason": ""})
            return
        if scope["type"] != "http":  # type: ignore[comparison-overlap]
            await app(scope, receive, send)
            return
        http_scope = cast("HTTPScope", scope)
        headers = http_scope["headers"]
        fork_sources = [
            value.decode("latin-1") for name, value in headers if name.lower() == _FORKED_FROM
        ]
        needed = required_access(
            http_scope["method"],
            http_scope["path"],
            fork_sources=fork_sources,
        )
        if not needed:
            await app(scope, receive, send)
            return
        try:
            identity = identity_from_headers(headers, scope_claim)
        except InvalidIdentity as exc:
            await _reply(send, 401, str(exc), challenge=True)
            return
        except MalformedScopes as exc:
            await _reply(send, 403, str(exc))
            return
        denied = next((access for access in needed if not identity.scopes.allows(access)), None)
        if denied is not None:
            await _reply(send, 403, _denial(denied))
            return
        # The writer identity (Stream-Seq is ordered per writer) is the verified
        # sub, whatever X-JWT-Sub the request carried.
        http_scope["headers"] = [
            *(item for item in headers if item[0].lower() != _SUB),
            (_SUB, identity.sub.encode("utf-8")),
        ]
        await app(scope, receive, send)

    return middleware


def _denial(access: Access) -> str:
    where = f"bucket {access.bucket!r}" if access.bucket is not None else "every bucket ('*')"
    return f"the token does not grant {access.mode.value} access to {where}"


async def _reply(send: Send, status: int, reason: str, *, challenge: bool = False) -> None:
    body = reason.encode() + b"\n"
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
        *SECURITY_HEADERS,
    ]
    if challenge:
        headers.append((b"www-authenticate", b'Bearer error="invalid_token"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})

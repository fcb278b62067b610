"""The reserved ``__ds`` API: subscriptions, webhook callbacks, pull-wake leases, JWKS.

Mounted at ``<stream prefix>/__ds``. Litestar prefers these static segments
over the stream routes' ``{path:path}``, and ``reject_reserved`` keeps any
other path with a ``__ds`` segment from ever reaching a stream.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec
from litestar import HttpMethod, Request, Response, Router, delete, get, post, put, route
from litestar.params import FromPath

from ds_server.edge.http import read_body
from ds_server.edge.surfaces import SERVER_API_PREFIX, STREAM_PREFIX
from ds_server.protocol import headers as h
from ds_server.protocol.names import RESERVED_SEGMENT
from ds_server.routes._context import context
from ds_server.subscriptions import SubscriptionError, SubscriptionManager, SubscriptionType, render
from ds_server.subscriptions import payloads as p
from ds_server.subscriptions.errors import SubscriptionNotFound, TokenInvalid, UnsupportedMediaType
from ds_server.subscriptions.signing import JWKS_CONTENT_TYPE

if TYPE_CHECKING:
    from litestar.types import ExceptionHandlersMap

Req = Request[Any, Any, Any]
# Declared explicitly: Litestar deprecates inferring where a handler argument comes from.
PathStr = FromPath[str]
BodyT = TypeVar("BodyT", bound=msgspec.Struct)

# Subscription bodies are small; anything bigger is a mistake or an attack.
_MAX_BODY_BYTES = 256 * 1024
_HOST_RE = re.compile(r"[A-Za-z0-9.\-_~%]+(:[0-9]{1,5})?|\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?")
_SUB = "/subscriptions/{sub_id:str}"


@put(_SUB, status_code=200)
async def put_subscription(request: Req, sub_id: PathStr) -> Response[bytes]:
    """Create a subscription (201) or re-confirm an identical one (200)."""
    manager = _manager(request)
    body = await _body(request, p.SubscriptionBody)
    spec = p.to_spec(p.subscription_id(sub_id), body)
    sub, created = await manager.put(spec, public_root(request))
    return _json(render.subscription_view(sub, manager.key), 201 if created else 200)


@get(_SUB)
async def get_subscription(request: Req, sub_id: PathStr) -> Response[bytes]:
    """The subscription object, with each linked stream's ack position."""
    manager = _manager(request)
    return _json(render.subscription_view(manager.get(sub_id), manager.key), 200)


@delete(_SUB, status_code=200)
async def delete_subscription(request: Req, sub_id: PathStr) -> Response[bytes]:
    """Delete a subscription; 204 whether or not it existed."""
    await _manager(request).delete(sub_id)
    return _no_content()


@post(f"{_SUB}/streams", status_code=200)
async def add_streams(request: Req, sub_id: PathStr) -> Response[bytes]:
    """Link more streams explicitly."""
    body = await _body(request, p.StreamsBody)
    await _manager(request).add_streams(sub_id, [p.stream_path(path) for path in body.streams])
    return _no_content()


@delete(f"{_SUB}/streams/{{stream:path}}", status_code=200)
async def remove_stream(request: Req, sub_id: FromPath[str], stream: PathStr) -> Response[bytes]:
    """Unlink an explicit stream; the path arrives percent-decoded once (``a%2Fb`` is ``a/b``)."""
    await _manager(request).remove_stream(sub_id, p.stream_path(stream))
    return _no_content()


@post(f"{_SUB}/callback", status_code=200)
async def webhook_callback(request: Req, sub_id: PathStr) -> Response[bytes]:
    """A webhook consumer acks (and maybe finishes) the wake it was sent."""
    return await _settle(request, sub_id, SubscriptionType.WEBHOOK)


@post(f"{_SUB}/ack", status_code=200)
async def pull_wake_ack(request: Req, sub_id: PathStr) -> Response[bytes]:
    """A pull-wake worker acks (and maybe finishes) the wake it claimed."""
    return await _settle(request, sub_id, SubscriptionType.PULL_WAKE)


@post(f"{_SUB}/claim", status_code=200)
async def pull_wake_claim(request: Req, sub_id: PathStr) -> Response[bytes]:
    """Lease the subscription's pending work to one worker."""
    body = await _body(request, p.ClaimBody)
    return _json(await _manager(request).claim(sub_id, body.worker), 200)


@post(f"{_SUB}/release", status_code=200)
async def pull_wake_release(request: Req, sub_id: PathStr) -> Response[bytes]:
    """Give a claimed wake back without acking."""
    token = _bearer(request)
    body = await _body(request, p.ReleaseBody)
    await _manager(request).release(sub_id, token, body)
    return _no_content()


@get("/jwks.json")
async def jwks(request: Req) -> Response[bytes]:
    """The public keys webhook signatures verify against."""
    return Response(
        content=render.encode(_manager(request).key.jwks()),
        status_code=200,
        headers={h.CONTENT_TYPE: JWKS_CONTENT_TYPE, h.CACHE_CONTROL: "public, max-age=300"},
    )


@route(["/", "/{rest:path}"], http_method=list(HttpMethod), status_code=404)
async def unknown_route(request: Req) -> Response[bytes]:
    """Anything else under ``__ds`` is reserved: never a stream."""
    raise SubscriptionNotFound("no such __ds route")


async def _to_leader(request: Req) -> Response[bytes] | None:
    """On a cluster, pass the request on to the replica that runs the subscriptions."""
    lead = context(request).lead
    if lead is None or lead.forward is None:
        return None
    return await lead.forward(request)


def router() -> Router:
    """The ``__ds`` routes: the server's API under the stream prefix."""
    handlers: ExceptionHandlersMap = {SubscriptionError: _error}
    return Router(
        path=SERVER_API_PREFIX,
        before_request=_to_leader,
        route_handlers=[
            put_subscription,
            get_subscription,
            delete_subscription,
            add_streams,
            remove_stream,
            webhook_callback,
            pull_wake_ack,
            pull_wake_claim,
            pull_wake_release,
            jwks,
            unknown_route,
        ],
        exception_handlers=handlers,
    )


def reject_reserved(request: Req) -> Response[bytes] | None:
    """Stream-route guard: a path with a ``__ds`` segment is never a stream."""
    if RESERVED_SEGMENT in request.scope["path"].split("/"):
        return _error(request, SubscriptionNotFound("__ds is a reserved path segment"))
    return None


def public_root(request: Req) -> str:
    """The stream root URL as the client sees it (honours X-Forwarded-Proto/Host)."""
    headers = request.headers
    scheme = _first(headers.get("x-forwarded-proto")) or request.url.scheme
    if scheme not in ("http", "https"):
        scheme = request.url.scheme
    host = _first(headers.get("x-forwarded-host")) or headers.get("host", "")
    if _HOST_RE.fullmatch(host) is None:
        host = request.url.netloc
    return f"{scheme}://{host}{STREAM_PREFIX}"


async def _settle(request: Req, sub_id: str, kind: SubscriptionType) -> Response[bytes]:
    token = _bearer(request)
    body = await _body(request, p.AckBody)
    next_wake = await _manager(request).settle(sub_id, kind, token, body)
    return _json({"ok": True, "next_wake": next_wake}, 200)


def _manager(request: Req) -> SubscriptionManager:
    ctx = context(request)
    events = ctx.lead.manager if ctx.lead is not None else ctx.events
    if not isinstance(events, SubscriptionManager):
        raise SubscriptionNotFound("subscriptions are not enabled on this server")
    return events


async def _body(request: Req, kind: type[BodyT]) -> BodyT:
    media_type = request.headers.get(h.CONTENT_TYPE, "").split(";", 1)[0].strip().lower()
    if media_type != "application/json":
        raise UnsupportedMediaType()
    return p.decode(await read_body(request, _MAX_BODY_BYTES), kind)


def _bearer(request: Req) -> str:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise TokenInvalid("expected Authorization: Bearer <token>")
    return token.strip()


def _first(value: str | None) -> str:
    # Proxies append: "X-Forwarded-Host: outer, inner"; the first is the client's.
    return value.split(",", 1)[0].strip() if value else ""


def _json(document: object, status: int) -> Response[bytes]:
    return Response(
        content=render.encode(document),
        status_code=status,
        headers={h.CONTENT_TYPE: "application/json"},
    )


def _no_content() -> Response[bytes]:
    return Response(content=b"", status_code=204)


def _error(_: Req, error: SubscriptionError) -> Response[bytes]:
    body = {"code": error.code, "message": error.message, **error.extra}
    return _json({"error": body}, error.status)

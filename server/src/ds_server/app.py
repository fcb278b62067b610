"""The Litestar application: routes, error mapping, CORS, security headers, store lifecycle."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from litestar import Litestar, Router
from litestar.config.cors import CORSConfig
from litestar.plugins.core import MsgspecDIPlugin

from ds_server.auth import gateway_auth
from ds_server.errors import EXCEPTION_HANDLERS
from ds_server.live import LiveNotifier
from ds_server.middleware import security_headers
from ds_server.protocol import headers as h
from ds_server.routes import bootstrap, buckets, fallback, health, snapshots, subscriptions
from ds_server.routes._context import STATE_KEY, ServerContext
from ds_server.routes.dispatch import StreamDispatcher
from ds_server.routes.viewer import viewer_router
from ds_server.settings import Settings
from ds_server.stores.registry import open_store
from ds_server.subscriptions import SubscriptionManager

if TYPE_CHECKING:
    from litestar.plugins import PluginProtocol
    from litestar.types import (
        ASGIApp,
        ControllerRouterHandler,
        LifeSpanReceive,
        LifeSpanScope,
        LifeSpanSend,
        Receive,
        Scope,
        Send,
    )

    from ds_server.stores.base import Store

STREAM_PREFIX = "/v1/stream"
BUCKET_PREFIX = "/ds"


class DsApp(Litestar):
    """The Litestar app behind its front stack: security headers, gateway auth, dispatcher.

    Calling the app runs the whole stack, so servers and test clients alike
    get exactly what production serves.
    """

    front: ASGIApp

    async def __call__(
        self,
        scope: Scope | LifeSpanScope,
        receive: Receive | LifeSpanReceive,
        send: Send | LifeSpanSend,
    ) -> None:
        await self.front(scope, receive, send)  # type: ignore[arg-type]

    async def _litestar(self, scope: Scope, receive: Receive, send: Send) -> None:
        await Litestar.__call__(self, scope, receive, send)

    @staticmethod
    def _get_default_plugins(plugins: list[PluginProtocol]) -> list[PluginProtocol]:
        # Litestar adds its pydantic and attrs plugins whenever those packages
        # are importable, and importing them costs ~2.7 MiB of resident memory.
        # No handler here takes or returns a pydantic or attrs type.
        return [*plugins, MsgspecDIPlugin()]


def create_app(settings: Settings | None = None, store: Store | None = None) -> DsApp:
    """Build the server application; ``store`` overrides the configured backend (tests)."""
    settings = settings or Settings()
    store = store or open_store(settings, LiveNotifier())
    subs = SubscriptionManager(
        store, allow_private_webhooks=settings.subscriptions.webhook_allow_private
    )
    ctx = ServerContext(settings=settings, store=store, route_prefix=STREAM_PREFIX, events=subs)

    async def on_startup(app: Litestar) -> None:
        store.live.bind(asyncio.get_running_loop())
        await store.start()

    async def on_shutdown(app: Litestar) -> None:
        await subs.close()
        await store.stop()

    # Stream operations themselves are served by the StreamDispatcher in front
    # (asgi_app); this router only guards the reserved __ds segment.
    stream_routes = Router(
        path=STREAM_PREFIX,
        route_handlers=[fallback.stream_path_fallback],
    )
    bucket_routes = Router(
        path=BUCKET_PREFIX,
        route_handlers=[
            buckets.create_bucket,
            buckets.bucket_metadata,
            buckets.delete_bucket,
            buckets.list_streams,
            snapshots.publish_snapshot,
            snapshots.latest_snapshot,
            snapshots.read_snapshot,
            snapshots.delete_snapshot,
            bootstrap.bootstrap,
            fallback.bucket_stream_fallback,
        ],
    )
    route_handlers: list[ControllerRouterHandler] = [
        health.healthz,
        subscriptions.router(STREAM_PREFIX),
        stream_routes,
        bucket_routes,
    ]
    if settings.http.viewer:
        route_handlers.append(viewer_router())
    app = DsApp(
        route_handlers=route_handlers,
        exception_handlers=EXCEPTION_HANDLERS,
        cors_config=CORSConfig(
            allow_origins=list(settings.http.cors_origins),
            allow_methods=["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"],
            allow_headers=["*"],
            expose_headers=list(h.EXPOSED),
            max_age=600,
        ),
        on_startup=[on_startup],
        on_shutdown=[on_shutdown],
        request_max_body_size=None,
        openapi_config=None,
        debug=False,
    )
    app.state[STATE_KEY] = ctx
    app.front = _front_stack(app, ctx)
    return app


def _front_stack(app: DsApp, ctx: ServerContext) -> ASGIApp:
    """Gateway authorization (when enabled) outermost, then the stream dispatcher, then
    Litestar. Every answer carries the security headers: the dispatcher and the
    authorization layer add them to theirs, a middleware to Litestar's.
    """
    settings = ctx.settings
    front: ASGIApp = StreamDispatcher(security_headers(app._litestar), ctx)
    if settings.auth.mode == "gateway":
        front = gateway_auth(front, scope_claim=settings.auth.scope_claim)
    return front


def asgi_app(app: DsApp) -> ASGIApp:
    """The ASGI callable to serve: the app's front stack, without the hop through the app."""
    return app.front

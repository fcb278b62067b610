"""The Litestar application: routes, error mapping, CORS, security headers, store lifecycle."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from litestar import Litestar, Router
from litestar.config.cors import CORSConfig

from ds_server.auth import gateway_auth
from ds_server.errors import EXCEPTION_HANDLERS
from ds_server.live import LiveNotifier
from ds_server.middleware import security_headers
from ds_server.protocol import headers as h
from ds_server.routes import (
    bootstrap,
    bucket_streams,
    buckets,
    health,
    reads,
    snapshots,
    streams,
    subscriptions,
)
from ds_server.routes._context import STATE_KEY, ServerContext
from ds_server.settings import Settings
from ds_server.stores.registry import open_store
from ds_server.subscriptions import SubscriptionManager

if TYPE_CHECKING:
    from litestar.types import ASGIApp

    from ds_server.stores.base import Store

STREAM_PREFIX = "/v1/stream"
BUCKET_PREFIX = "/ds"


def create_app(settings: Settings | None = None, store: Store | None = None) -> Litestar:
    """Build the server application; ``store`` overrides the configured backend (tests)."""
    settings = settings or Settings()
    store = store or open_store(settings, LiveNotifier())
    subs = SubscriptionManager(store)
    ctx = ServerContext(settings=settings, store=store, route_prefix=STREAM_PREFIX, events=subs)

    async def on_startup(app: Litestar) -> None:
        store.live.bind(asyncio.get_running_loop())
        await store.start()

    async def on_shutdown(app: Litestar) -> None:
        await subs.close()
        await store.stop()

    stream_routes = Router(
        path=STREAM_PREFIX,
        route_handlers=[
            streams.create_stream,
            streams.append_to_stream,
            streams.stream_metadata,
            streams.delete_stream,
            reads.read_stream,
        ],
        before_request=subscriptions.reject_reserved,
    )
    bucket_routes = Router(
        path=BUCKET_PREFIX,
        route_handlers=[
            buckets.create_bucket,
            buckets.bucket_metadata,
            buckets.delete_bucket,
            buckets.list_streams,
            bucket_streams.create_in_bucket,
            bucket_streams.append_in_bucket,
            bucket_streams.read_in_bucket,
            bucket_streams.head_in_bucket,
            bucket_streams.delete_in_bucket,
            snapshots.publish_snapshot,
            snapshots.latest_snapshot,
            snapshots.read_snapshot,
            snapshots.delete_snapshot,
            bootstrap.bootstrap,
        ],
    )
    app = Litestar(
        route_handlers=[
            health.healthz,
            subscriptions.router(STREAM_PREFIX),
            stream_routes,
            bucket_routes,
        ],
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
    return app


def asgi_app(app: Litestar) -> object:
    """The ASGI callable to serve: the app wrapped in authorization and security headers.

    Authorization wraps the app only with ``DS_AUTH__MODE=gateway``; security
    headers wrap everything, so 401/403 answers carry them too.
    """
    settings = app.state[STATE_KEY].settings
    inner: ASGIApp = app
    if settings.auth.mode == "gateway":
        inner = gateway_auth(
            app, stream_prefix=STREAM_PREFIX, scope_claim=settings.auth.scope_claim
        )
    return security_headers(inner)

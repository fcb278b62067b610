"""The Litestar application: routes, error mapping, CORS, security headers, store lifecycle."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from litestar import Litestar, Router
from litestar.config.cors import CORSConfig

from ds_server.errors import EXCEPTION_HANDLERS
from ds_server.live import LiveNotifier
from ds_server.middleware import security_headers
from ds_server.protocol import headers as h
from ds_server.routes import health, reads, streams
from ds_server.routes._context import STATE_KEY, ServerContext
from ds_server.settings import Settings
from ds_server.stores.registry import open_store

if TYPE_CHECKING:
    from ds_server.stores.base import Store

STREAM_PREFIX = "/v1/stream"


def create_app(settings: Settings | None = None, store: Store | None = None) -> Litestar:
    """Build the server application; ``store`` overrides the configured backend (tests)."""
    settings = settings or Settings()
    store = store or open_store(settings, LiveNotifier())
    ctx = ServerContext(settings=settings, store=store, route_prefix=STREAM_PREFIX)

    async def on_startup(app: Litestar) -> None:
        store.live.bind(asyncio.get_running_loop())
        await store.start()

    async def on_shutdown(app: Litestar) -> None:
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
    )
    app = Litestar(
        route_handlers=[health.healthz, stream_routes],
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
    """The ASGI callable to serve: the app wrapped in the security-header middleware."""
    return security_headers(app)

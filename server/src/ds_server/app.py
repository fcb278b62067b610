"""The server application: the edge in front, the stream operations, Litestar for the rest.

A request meets one ASGI layer (``edge.layer.Edge``: CORS, security
headers, per-request hooks, gateway authorization when enabled). Stream
operations are then served straight on ASGI by the dispatcher; every other
route (buckets, listings, snapshots, bootstrap, subscriptions, health) by
Litestar. ``docs/architecture.md`` says why there are two.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from litestar import Litestar, Router
from litestar.plugins.core import MsgspecDIPlugin

from ds_server import observability
from ds_server.auth import GatewayGuard
from ds_server.cluster.cluster import Cluster
from ds_server.edge.cors import Cors
from ds_server.edge.errors import EXCEPTION_HANDLERS
from ds_server.edge.layer import Edge
from ds_server.edge.surfaces import BUCKET_PREFIX, STREAM_PREFIX
from ds_server.live import LiveNotifier
from ds_server.routes import bootstrap, buckets, fallback, health, snapshots, subscriptions
from ds_server.routes._context import STATE_KEY, ServerContext
from ds_server.routes.dispatch import StreamDispatcher
from ds_server.routes.viewer import viewer_router
from ds_server.settings import Settings
from ds_server.stores.registry import open_store
from ds_server.stream_observer import StreamObserver
from ds_server.subscriptions import SubscriptionManager
from ds_server.subscriptions.storage import open_subscription_storage

if TYPE_CHECKING:
    import socket
    from collections.abc import Sequence

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

    from ds_server.edge.layer import RequestHook
    from ds_server.postgres_database import PostgresDatabase
    from ds_server.stores.base import Store


class DsApp(Litestar):
    """The Litestar app behind the edge.

    Calling the app runs the whole stack (the edge first), so servers and
    test clients alike get exactly what production serves.
    """

    front: ASGIApp
    # The request log, if requests are logged: ``close`` it once serving has ended.
    request_log: observability.AccessLog | None = None

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


def create_app(
    settings: Settings | None = None,
    store: Store | None = None,
    *,
    hooks: Sequence[RequestHook] = (),
    metrics_socket: socket.socket | None = None,
) -> DsApp:
    """Build the server application.

    ``store`` overrides the configured backend; ``hooks`` are told about every
    request, after the metrics and request log the settings ask for.
    ``metrics_socket``: serve ``/metrics`` there while the app runs.
    """
    settings = settings or Settings()
    store = store or open_store(settings, LiveNotifier())
    # The postgres backend's connections, shared by the subscriptions and the leadership.
    database = _database_of(store)

    def subscription_manager() -> SubscriptionManager:
        return SubscriptionManager(
            store,
            storage=open_subscription_storage(settings, database),
            allow_private_webhooks=settings.subscriptions.webhook_allow_private,
            # Below the per-stream limit, or wakes would be refused before a trim.
            wake_stream_retained_bytes=min(
                settings.subscriptions.wake_stream_retained_bytes,
                settings.limits.max_retained_bytes // 2,
            ),
        )

    cluster = Cluster.of(settings, store, database, subscription_manager)
    subs = None if cluster else subscription_manager()
    ctx = ServerContext(
        settings=settings,
        store=store,
        events=cluster.lead if cluster else (subs or StreamObserver()),
        lead=cluster.lead if cluster else None,
    )
    request_log = _request_log(settings)
    hooks = [*_builtin_hooks(settings, request_log), *hooks]
    endpoint: list[asyncio.Server] = []

    async def on_startup(app: Litestar) -> None:
        store.live.bind(asyncio.get_running_loop())
        await store.start()
        # Subscriptions check their links against the open store.
        if subs is not None:
            await subs.start()
        if cluster is not None:
            await cluster.start()
        if settings.metrics.enabled:
            observability.watch(
                store,
                families=settings.metrics.stream_families,
                retained_limit=settings.limits.max_retained_bytes,
            )
            if metrics_socket is not None:
                endpoint.append(await observability.serve_metrics(metrics_socket))

    async def on_shutdown(app: Litestar) -> None:
        for server in endpoint:
            server.close()
        observability.watch(None)
        if subs is not None:
            await subs.close()
        if cluster is not None:
            await cluster.stop()
        await store.stop()
        if request_log is not None:
            # Requests cancelled at shutdown may still add lines: the server closes it last.
            request_log.flush()

    # Stream operations themselves are served by the dispatcher at the edge;
    # this router only answers what else reaches those paths (405, __ds).
    stream_routes = Router(path=STREAM_PREFIX, route_handlers=[fallback.stream_path_fallback])
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
        subscriptions.router(),
        stream_routes,
        bucket_routes,
    ]
    if settings.http.viewer:
        route_handlers.append(viewer_router())
    app = DsApp(
        route_handlers=route_handlers,
        exception_handlers=EXCEPTION_HANDLERS,
        on_startup=[on_startup],
        on_shutdown=[on_shutdown],
        request_max_body_size=None,
        openapi_config=None,
        # Logging is the process's (observability.log_format): Litestar adds no handlers.
        logging_config=None,
        debug=False,
    )
    app.state[STATE_KEY] = ctx
    app.request_log = request_log
    guard = None
    if settings.auth.mode == "gateway":
        guard = GatewayGuard(
            scope_claim=settings.auth.scope_claim,
            max_live_reads_per_sub=settings.auth.max_live_reads_per_sub,
        )
    app.front = Edge(
        app._litestar,
        StreamDispatcher(ctx),
        Cors(settings.http.cors_origins),
        guard=guard,
        hooks=hooks,
    )
    return app


def _database_of(store: Store) -> PostgresDatabase | None:
    """The database a postgres-backed store reaches, which it owns and closes last."""
    database: PostgresDatabase | None = getattr(
        getattr(store, "persistence", None), "database", None
    )
    return database


def _builtin_hooks(
    settings: Settings, request_log: observability.AccessLog | None
) -> list[RequestHook]:
    hooks: list[RequestHook] = []
    if settings.metrics.enabled:
        hooks.append(observability.RequestMetrics())
    if request_log is not None:
        hooks.append(request_log)
    return hooks


def _request_log(settings: Settings) -> observability.AccessLog | None:
    # Not even a hook when its lines would be dropped (ds-server --log-level warning).
    if settings.log.requests and observability.access_log.log.isEnabledFor(logging.INFO):
        return observability.AccessLog(settings.log.format, flush_secs=settings.log.flush_secs)
    return None


def asgi_app(app: DsApp) -> ASGIApp:
    """The ASGI callable to serve: the edge, without the hop through the app."""
    return app.front

"""``ds-sync run``: wiring the parts together, start-up in order, shutdown on SIGTERM.

Start-up: migrations (retried with backoff until Postgres answers), the
connection pool, the checkpoints, the wake subscriptions, a first scan;
then /healthz answers 200. Shutdown (SIGTERM or Ctrl-C): stop discovering,
cancel the readers, let the writer finish the transaction it is in, close
the pool. A batch that was read but not committed is simply read again
next time: the checkpoint only moves with its rows.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from typing import TYPE_CHECKING, Any

import httpx
import psycopg
from ds_schema.migrate import MigrationError, migrate
from durable_sessions.async_server import AsyncStreamServer, UnexpectedStatusError
from durable_sessions.http1 import Http1Client
from durable_sessions.protocol.listing import StreamInfo
from psycopg_pool import AsyncConnectionPool

from ds_sync.backoff import Backoff
from ds_sync.http_endpoint import serve
from ds_sync.metrics import Metrics
from ds_sync.metrics_export import Exposition
from ds_sync.mirror import MirrorStore, TableMirror
from ds_sync.options import component_options
from ds_sync.sessions import Scanner, ShardLeases, Sightings, Streams, Wakes, checkpoints

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from ds_sync.mirror.options import MirrorOptions
    from ds_sync.settings import Settings
    from ds_sync.table_names import TableName

log = logging.getLogger("ds_sync")

# Reads wait up to the server's SSE keep-alive (15 s) between lines; allow more.
HTTP_TIMEOUT = httpx.Timeout(10.0, read=60.0)


async def run(settings: Settings, stop: asyncio.Event | None = None) -> None:
    """Sync until ``stop`` is set, or SIGTERM/SIGINT arrives."""
    stop = stop or _stop_on_signals()
    options = component_options(settings)
    metrics = Metrics(top_streams=settings.metrics_top_streams)
    exposition = Exposition(metrics)
    ready = False
    streams: Streams | None = None

    def metrics_text() -> str:
        if streams is not None:
            streams.refresh_metrics()
        return exposition.render()

    endpoint = None
    if settings.metrics_port:
        endpoint = await serve(
            settings.metrics_host, settings.metrics_port, metrics_text, lambda: ready
        )
    limits = httpx.Limits(max_connections=settings.max_readers + 16, max_keepalive_connections=64)
    async with httpx.AsyncClient(timeout=HTTP_TIMEOUT, limits=limits) as http:
        lean = Http1Client(timeout_secs=HTTP_TIMEOUT.connect or 10.0)
        # The server's token on every request to it; a token file is read again when it
        # changes, and after a 401.
        api = AsyncStreamServer(
            settings.server_url, token=settings.token_source, http=http, lean=lean
        )
        await _until(
            stop,
            lambda: asyncio.to_thread(_migrate, settings.postgres_url),
            "migrating the database",
        )
        if stop.is_set():
            return
        # Autocommit: the writer's one-statement commits are transactions of their own.
        pool = AsyncConnectionPool(
            settings.postgres_url,
            min_size=2,
            max_size=settings.pool_size,
            kwargs={"autocommit": True},
            open=False,
        )
        await pool.open()
        streams = Streams(options.readers, api, http, pool, metrics)
        scanner = Scanner(settings.streams, api, streams, metrics, rescan_secs=settings.rescan_secs)
        leases: ShardLeases | None = None
        sightings: Sightings | None = None
        if settings.shards:
            leases = ShardLeases(
                options.leases,
                api,
                pool,
                metrics,
                on_gained=streams.shards_gained,
                on_lost=streams.shards_lost,
                on_resumed=streams.shards_resumed,
            )
            streams.ownership = leases
            sightings = Sightings(
                settings.postgres_url,
                settings.name,
                pool,
                seen=lambda path, tail: _seen(streams, path, tail),
                missed=scanner.scan,
            )
        wakes = Wakes(
            settings.name,
            settings.streams,
            api,
            streams.observe,
            scanner.scan,
            metrics,
            interval_secs=settings.wake_interval_secs,
            ownership=streams.ownership,
            publish=None if sightings is None else sightings.publish,
        )
        tasks = _start_mirrors(
            settings.tables, options.mirror, api, http, MirrorStore(pool), metrics
        )
        try:
            streams.load(await checkpoints.load_all(pool))
            if leases is not None and sightings is not None:
                tasks.append(asyncio.create_task(sightings.listen(), name="sightings"))
                lease_start = await _until(stop, leases.prepare, "taking shard leases")
                if lease_start is not None:
                    # Renewed from now on: subscribing and the first listing may take longer
                    # than the leases' TTL on a busy machine.
                    tasks.append(asyncio.create_task(leases.run(lease_start), name="leases"))
            start = await _until(stop, wakes.prepare, "subscribing to wakes")
            await _until(stop, scanner.scan, "listing the streams")
            # From now on, shards taken over are listed again (start-up just did).
            streams.rescan = scanner.scan
            if not stop.is_set():
                tasks += [
                    asyncio.create_task(_keep_listening(wakes, start), name="wakes"),
                    asyncio.create_task(wakes.claim_loop(), name="claims"),
                    asyncio.create_task(scanner.run(), name="rescans"),
                ]
                ready = True
                log.info(
                    "syncing %s from %s into Postgres (%s)",
                    ", ".join(p.text for p in settings.streams),
                    settings.server_url,
                    "every stream"
                    if leases is None
                    else f"instance {leases.instance}: {len(leases.held)} of "
                    f"{leases.shards} shards",
                )
                await stop.wait()
        finally:
            ready = False
            log.info("stopping: finishing the open transactions")
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await streams.stop()
            if leases is not None:
                # After the last commit: the next holder starts from it.
                await leases.stop()
            await pool.close()
            await lean.aclose()
            if endpoint is not None:
                endpoint.close()
            log.info("stopped")


def _start_mirrors(
    tables: tuple[TableName, ...],
    options: MirrorOptions,
    api: AsyncStreamServer,
    http: httpx.AsyncClient,
    store: MirrorStore,
    metrics: Metrics,
) -> list[asyncio.Task[None]]:
    """One task per mirrored table (Postgres → stream), each on its own."""
    tasks = []
    for table in tables:
        figures = metrics.table(table.text)
        mirror = TableMirror(table, options, api, http, store, figures)
        tasks.append(asyncio.create_task(mirror.run(), name=f"mirror {table.text}"))
    if tables:
        log.info(
            "mirroring %s into streams (%s feed)",
            ", ".join(table.text for table in tables),
            options.feed,
        )
    return tasks


async def _keep_listening(wakes: Wakes, start: str | None) -> None:
    """Read wakes for ever; after an error, subscribe again and rescan (wakes may be lost)."""
    backoff = Backoff(cap=30.0)
    while True:
        try:
            if start is None:
                start = await wakes.prepare()
                await wakes.rescan_now()
            await wakes.listen(start)
        except (httpx.HTTPError, UnexpectedStatusError, OSError) as exc:
            delay = backoff.next_delay()
            log.warning("wake stream: %s; subscribing again in %.2fs", exc, delay)
            await asyncio.sleep(delay)
        except Exception as exc:  # e.g. the wake stream was deleted (404)
            delay = backoff.next_delay()
            log.warning(
                "wake stream: %s: %s; subscribing again in %.2fs", type(exc).__name__, exc, delay
            )
            await asyncio.sleep(delay)
        else:
            backoff.reset()
        start = None


def _seen(streams: Streams, path: str, tail: int) -> None:
    streams.observe(StreamInfo(path=path, content_type=None, tail=tail))


def _migrate(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        applied = migrate(conn)
    for migration in applied:
        log.info("applied migration %04d_%s", migration.version, migration.name)


async def _until(stop: asyncio.Event, step: Callable[[], Awaitable[Any]], what: str) -> Any:
    """Run ``step`` until it succeeds, backing off with jitter while Postgres or the server
    are unreachable; None if stopped meanwhile, or if the server refuses it (4xx)."""
    backoff = Backoff(cap=5.0)
    while not stop.is_set():
        try:
            return await step()
        except MigrationError:
            raise
        except UnexpectedStatusError as exc:
            if 400 <= exc.status < 500:
                log.error("%s: the server refuses it (%s); going on without", what, exc)
                return None
            problem = str(exc)
        except Exception as exc:
            # Unreachable Postgres or server, or an answer we could not read.
            problem = f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"
        delay = backoff.next_delay()
        log.warning("%s failed (%s); retrying in %.2fs", what, problem, delay)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), delay)
    return None


def _stop_on_signals() -> asyncio.Event:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    return stop

"""``ds-server``: serve the Durable Streams protocol with uvicorn."""

from __future__ import annotations

import argparse
import gc
import logging
import signal
import socket
import sys
from typing import TYPE_CHECKING, NoReturn

# ds-server never reloads its code, and uvicorn imports its file watcher
# (watchfiles, ~0.8 MiB resident) only to offer --reload; with the module
# marked missing, uvicorn falls back to its watcher-free reloader class.
sys.modules.setdefault("watchfiles", None)  # type: ignore[arg-type]

import uvicorn  # noqa: E402

from ds_server import build, listen, metrics  # noqa: E402
from ds_server.app import asgi_app, create_app  # noqa: E402
from ds_server.backends import uses_data_dir  # noqa: E402
from ds_server.freed_memory import keep_freed_memory  # noqa: E402
from ds_server.http_protocol import ConnectionLimits, LeanHttpToolsProtocol  # noqa: E402
from ds_server.observability import configure_logging  # noqa: E402
from ds_server.settings import SettingsError, load_settings  # noqa: E402
from ds_server.stores.dir_lock import DirectoryLock, DirectoryLockError  # noqa: E402

if TYPE_CHECKING:
    from litestar.types import ASGIApp

    from ds_server.observability import AccessLog
    from ds_server.settings import Settings


def main(argv: list[str] | None = None) -> None:
    """Run the server until interrupted; settings come from ``DS_*`` variables."""
    parser = argparse.ArgumentParser(prog="ds-server", description=__doc__)
    parser.add_argument("--host", help="override DS_SERVER__HOST")
    parser.add_argument("--port", type=_port, help="override DS_SERVER__PORT")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning"])
    described = build.describe()  # reads package metadata: once
    parser.add_argument("--version", action="version", version=described)
    args = parser.parse_args(argv)
    try:
        settings = load_settings()
    except SettingsError as exc:
        _fail(str(exc))
    configure_logging(args.log_level, settings.log.format)
    # Process-wide: the stores' writers record commits unless metrics are off.
    metrics.enable(settings.metrics.enabled)
    host = args.host or settings.server.host
    port = settings.server.port if args.port is None else args.port
    # Claimed for the life of the process, before anything else: a second
    # server on the same data directory would serve stale data and lose writes.
    data_dir_lock = _lock_data_dir(settings)
    _check_postgres_version(settings)
    # An error names what the user set: the flag, if given, else the variable.
    names = {
        "host": "--host" if args.host else "DS_SERVER__HOST",
        "port": "--port" if args.port is not None else "DS_SERVER__PORT",
    }
    sockets = _bind(host, port, names)
    metrics_socket = _bind_metrics(settings)
    log = logging.getLogger("ds_server")
    log.info("%s", described)
    for sock in sockets:
        log.info("serving %s once the store is open", _address(sock))
    if metrics_socket is not None:
        log.info("metrics at %s/metrics", _address(metrics_socket))
    app = create_app(settings, metrics_socket=metrics_socket)
    config = uvicorn_config(asgi_app(app), settings, host, port, args.log_level)
    _tune_gc()
    keep_freed_memory(settings.server.keep_freed_memory_bytes)
    stopped_by = _serve(uvicorn.Server(config), sockets, app.request_log)
    if data_dir_lock is not None:
        data_dir_lock.release()
    for signum in stopped_by:
        signal.raise_signal(signum)


def _serve(
    server: uvicorn.Server, sockets: list[socket.socket], request_log: AccessLog | None
) -> list[int]:
    """Serve until stopped; the signals that stopped it, to raise again once all is written.

    uvicorn raises the signal that stopped it again once it has shut down,
    which would end the process before the request log's last lines (of
    requests that ended during the shutdown) are written. Here the signal
    is only noted while uvicorn runs; the caller raises it at the very end.
    """
    caught: list[int] = []
    previous = {
        signum: signal.signal(signum, lambda signum, frame: caught.append(signum))
        for signum in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        server.run(sockets=sockets)
    finally:
        if request_log is not None:
            request_log.close()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return caught


def uvicorn_config(
    app: ASGIApp, settings: Settings, host: str, port: int, log_level: str
) -> uvicorn.Config:
    """How ``ds-server`` runs ``app`` on uvicorn (tests that wrap the app use it too)."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        loop="uvloop",
        http=LeanHttpToolsProtocol.with_limits(
            ConnectionLimits(
                request_head_secs=settings.server.request_headers_timeout_secs,
                stalled_reader_secs=settings.server.stalled_reader_timeout_secs,
            )
        ),
        lifespan="on",
        # No WebSocket routes: don't load a WebSocket library (~0.5 MiB of RSS).
        ws="none",
        log_level=log_level,
        # Logging is configured already (DS_LOG__FORMAT): uvicorn's records
        # go through the same handler as ours.
        log_config=None,
        # The request log is ds_server.access, which never logs a query string.
        access_log=False,
        server_header=False,
        # Nothing here reads the client address; the gateway forwards identity
        # in its own headers, so skip uvicorn's X-Forwarded-For rewriting.
        proxy_headers=False,
        timeout_keep_alive=settings.server.keep_alive_secs,
        # SSE and long-poll connections end on their own; don't wait long for them.
        timeout_graceful_shutdown=2,
    )


def _port(value: str) -> int:
    port = int(value)
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a TCP port (0-65535)")
    return port


def _lock_data_dir(settings: Settings) -> DirectoryLock | None:
    if not uses_data_dir(settings.storage.mode):
        return None
    try:
        return DirectoryLock.acquire(settings.storage.data_dir)
    except DirectoryLockError as exc:
        _fail(f"DS_STORAGE__DATA_DIR={str(settings.storage.data_dir)!r}: {exc}")


def _check_postgres_version(settings: Settings) -> None:
    if settings.storage.mode != "postgres":
        return
    from ds_server.stores._postgres.version import unsupported_server

    problem = unsupported_server(settings.storage.postgres_url)
    if problem is not None:
        _fail(f"DS_STORAGE__POSTGRES_URL: {problem}")


def _bind(host: str, port: int, names: dict[str, str]) -> list[socket.socket]:
    # Bound before the store opens, so a taken port costs no recovery.
    try:
        return listen.bind(host, port)
    except listen.ListenError as exc:
        value = host if exc.setting == "host" else port
        _fail(f"{names[exc.setting]}={value!r}: {exc}")


def _bind_metrics(settings: Settings) -> socket.socket | None:
    if not settings.metrics.enabled:
        return None
    host, port = settings.metrics.host, settings.metrics.port
    try:
        sockets = listen.bind(host, port)
    except listen.ListenError as exc:
        value = host if exc.setting == "host" else port
        _fail(f"DS_METRICS__{exc.setting.upper()}={value!r}: {exc}")
    # One listener is enough for a scraper: the first address of the name.
    for extra in sockets[1:]:
        extra.close()
    return sockets[0]


def _address(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if sock.family == socket.AF_INET6 else f"http://{host}:{port}"


def _fail(message: str) -> NoReturn:
    # One line, as docs/configuration.md promises: no usage text, no traceback.
    print(f"ds-server: error: {message}", file=sys.stderr)
    sys.exit(2)


def _tune_gc() -> None:
    # What start-up made (modules, routes, settings) lives as long as the
    # process: freeze it so collections never walk it again. Serving allocates
    # many short-lived objects, futures above all; collecting the young
    # generation every 10,000 allocations instead of 700 cut the server's user
    # CPU by ~15% with 1,000 SSE subscribers.
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)


if __name__ == "__main__":
    main()

"""``ds-postgres``: run the embedded Postgres in the foreground until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from ds_settings.defaults import DATABASE, POSTGRES_PORT

from ds_stack.postgres.server import EmbeddedPostgres, PostgresConfig, PostgresError


def main(argv: list[str] | None = None) -> None:
    """Start Postgres in ``--data-dir``, create the database, print its URL, wait for a signal."""
    parser = argparse.ArgumentParser(prog="ds-postgres", description=__doc__)
    parser.add_argument("--data-dir", type=Path, default=Path("data/postgres"))
    parser.add_argument("--port", type=int, default=POSTGRES_PORT, help="0 picks a free port")
    parser.add_argument("--database", default=DATABASE)
    args = parser.parse_args(argv)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    server = EmbeddedPostgres(PostgresConfig(data_dir=args.data_dir, port=args.port))
    try:
        server.start()
        url = server.create_database(args.database)
    except PostgresError as exc:
        server.stop()
        sys.exit(f"ds-postgres: {exc}")
    print(f"ds-postgres: {url} (data in {server.data_dir}; Ctrl-C stops)", flush=True)
    try:
        while not stop.wait(1.0):
            if not server.running:
                sys.exit(f"ds-postgres: the server exited; see {server.log_path}")
    finally:
        server.stop()

"""``ds-sync``: sync session streams into Postgres. ``ds-sync migrate`` only applies the schema."""

from __future__ import annotations

import argparse
import logging
import sys

import psycopg
from ds_schema.migrate import MigrationError, migrate

from ds_sync.http_endpoint import EndpointError
from ds_sync.settings import SettingsError, load_settings

log = logging.getLogger("ds_sync")


def main(argv: list[str] | None = None) -> None:
    """``ds-sync [run]`` syncs until SIGTERM; ``ds-sync migrate`` applies migrations and exits."""
    parser = argparse.ArgumentParser(prog="ds-sync", description=__doc__)
    parser.add_argument("command", nargs="?", default="run", choices=["run", "migrate"])
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning"])
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s"
    )
    # Each request would otherwise be logged at info level.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("httpcore").setLevel(logging.WARNING)
    try:
        settings = load_settings()
    except SettingsError as exc:
        parser.error(str(exc))
    if args.command == "migrate":
        sys.exit(_migrate(settings.postgres_url))
    from ds_sync.service import run

    try:
        import uvloop

        uvloop.run(run(settings))
    except (MigrationError, EndpointError) as exc:
        sys.exit(f"ds-sync: {exc}")


def _migrate(url: str) -> int:
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
            applied = migrate(conn)
    except (psycopg.Error, MigrationError) as exc:
        print(f"ds-sync: migrate: {exc}", file=sys.stderr)
        return 1
    if applied:
        for migration in applied:
            print(f"applied {migration.version:04d}_{migration.name}")
    else:
        print("the schema is up to date")
    return 0


if __name__ == "__main__":
    main()

"""The driver's few statements against Postgres: the schema, and ds-sync's checkpoints.

Only metadata passes here (one row per stream at most); events are read
and tables written by the executors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import psycopg
from ds_schema.migrate import MigrationError, migrate
from ds_schema.postgres_version import unsupported
from durable_sessions.protocol.offsets import parse_offset

from ds_spark.errors import DsSparkError, PostgresUnreachable
from ds_spark.sources.session_events import describe_postgres_error

if TYPE_CHECKING:
    from collections.abc import Iterable


def connect(url: str) -> psycopg.Connection[Any]:
    """A connection, or PostgresUnreachable in one line; a server older than 14 is refused."""
    try:
        conn = psycopg.connect(url, connect_timeout=10)
    except psycopg.OperationalError as exc:
        raise PostgresUnreachable(describe_postgres_error(url, exc)) from None
    problem = unsupported(conn.info.server_version, "ds-spark")
    if problem is not None:
        conn.close()
        raise DsSparkError(problem)
    return conn


def ensure_schema(url: str) -> None:
    """Create the tables ds-spark reads and writes if missing: the contract's migrations,
    the same ds-sync applies (whichever starts first creates them)."""
    with connect(url) as conn:
        conn.autocommit = True
        try:
            migrate(conn, program="ds-spark")
        except MigrationError as exc:
            raise DsSparkError(f"Postgres schema: {exc}") from None


def committed_checkpoints(url: str, streams: Iterable[str] | None = None) -> dict[str, int]:
    """Per stream, the offset ds-sync has committed up to (its next read's start)."""
    with connect(url) as conn:
        rows = conn.execute("SELECT stream_name, next_offset FROM sync_checkpoints").fetchall()
    wanted = None if streams is None else set(streams)
    return {
        str(name): parse_offset(str(offset))
        for name, offset in rows
        if wanted is None or name in wanted
    }

"""What the tests and tools do to a server through its superuser URL, whoever runs it:
create and drop databases, and read its version."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg

# How long a dropped database's replication slots may stay in use.
_SLOT_RELEASE_SECS = 15.0


def create_database(admin_url: str, name: str) -> None:
    """Create ``name`` unless it exists."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if exists is None:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def drop_database(admin_url: str, name: str) -> None:
    """Drop ``name``, disconnecting whoever is still connected to it and dropping its
    logical replication slots (which would refuse the drop)."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(admin_url, autocommit=True) as conn:
        _drop_slots(conn, name)
        statement = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
        conn.execute(statement.format(sql.Identifier(name)))


def server_version(admin_url: str) -> str:
    """The server's ``server_version``, e.g. ``15.18 (Debian 15.18-0+deb12u1)``."""
    import psycopg

    with psycopg.connect(admin_url) as conn:
        row = conn.execute("SHOW server_version").fetchone()
    assert row is not None
    return str(row[0])


def _drop_slots(conn: psycopg.Connection[Any], database: str) -> None:
    """Drop the database's replication slots; a slot in use is freed by ending its backend."""
    import psycopg

    deadline = time.monotonic() + _SLOT_RELEASE_SECS
    while True:
        conn.execute(
            "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots "
            "WHERE database = %s AND active_pid IS NOT NULL",
            (database,),
        )
        try:
            conn.execute(
                "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                "WHERE database = %s",
                (database,),
            )
            return
        except psycopg.errors.ObjectInUse:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)

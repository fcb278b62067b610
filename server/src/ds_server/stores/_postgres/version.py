"""The PostgreSQL versions the postgres store (and the replicas' leadership) run on: 14 and
newer, tested on 14 to 18. An older server is refused before the server starts serving."""

from __future__ import annotations

import psycopg

MINIMUM_MAJOR = 14
_CONNECT_TIMEOUT_SECS = 10


def unsupported_server(url: str) -> str | None:
    """Why the server at ``url`` can't hold the store, or None; one that can't be reached
    now is left to the store, which reports (and retries) that itself."""
    try:
        with psycopg.connect(url, connect_timeout=_CONNECT_TIMEOUT_SECS) as conn:
            row = conn.execute(
                "SELECT current_setting('server_version_num')::int, "
                "current_setting('server_version')"
            ).fetchone()
    except psycopg.Error:
        return None
    assert row is not None
    number, text = int(row[0]), str(row[1])
    if number >= MINIMUM_MAJOR * 10000:
        return None
    return f"PostgreSQL {text} is not supported: the postgres store needs {MINIMUM_MAJOR} or newer"

"""The native feed on Debian's PostgreSQL 15, whatever server the other tests use.

Reported: with ``DS_SYNC__TABLES=items`` on Debian bookworm's
``postgresql-15``, the first sync reached ``pg-items`` and nothing after it
did; ds-sync's log repeated ``UndefinedFunction: function
pg_log_standby_snapshot() does not exist`` (a function of PostgreSQL 16 on).
The Makefile installs ``postgresql-15`` where it is missing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg
import pytest
from ds_schema.migrate import migrate
from ds_stack.postgres._binaries import binaries_version
from ds_stack.postgres.testing import local_postgres
from mirror_support import (
    controls,
    delete_stream,
    duplicates,
    items_rows,
    materialise,
    normalised_items,
    wait_for_stream,
)
from sync_support import SyncProcess

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ds_stack.postgres import EmbeddedPostgres
    from sync_support import Streams

DEBIAN_15 = Path(os.environ.get("DS_TEST_POSTGRES15_BIN", "/usr/lib/postgresql/15/bin"))


@pytest.fixture(scope="module")
def postgres15() -> Iterator[EmbeddedPostgres]:
    with local_postgres(DEBIAN_15) as server:
        assert binaries_version(server.bin_dir)[0] == 15
        yield server


def test_changes_after_the_first_sync_reach_the_stream_on_postgres_15(
    postgres15: EmbeddedPostgres, ds_server: str, streams: Streams
) -> None:
    url = postgres15.create_database("items15")
    delete_stream(ds_server, "pg-items")
    with psycopg.connect(url, autocommit=True) as conn:
        migrate(conn)
        conn.execute("INSERT INTO items (title) SELECT 'seed ' || n FROM generate_series(1, 5) n")
    sync = SyncProcess(ds_server, url, f"{streams.bucket}/*", env={"DS_SYNC__TABLES": "items"})
    try:
        sync.start()
        wait_for_stream(
            ds_server,
            "pg-items",
            lambda messages: "snapshot-end" in controls(messages),
            what="the first sync",
        )
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("INSERT INTO items (title) VALUES ('after the first sync')")
            conn.execute("UPDATE items SET body = 'changed' WHERE title = 'seed 2'")
            conn.execute("DELETE FROM items WHERE title = 'seed 3'")
        expected = items_rows(url)
        messages = wait_for_stream(
            ds_server,
            "pg-items",
            lambda messages: normalised_items(materialise(messages, "items")) == expected,
            what="the changes made after the first sync",
        )
        assert duplicates(messages) == 0
        assert "reset" not in controls(messages)
        assert sync.stop() == 0
    finally:
        sync.kill()
    log = sync.log()
    assert "UndefinedFunction" not in log, log
    assert "pg_log_standby_snapshot" not in log, log

"""The native feed's slot while ds-sync is down: a warning when it holds much WAL, and a
full re-sync (after a reset) once Postgres invalidated it for holding too much.

A Postgres of its own, with ``max_slot_wal_keep_size = 1MB``: the shared one
must not lose other tests' slots.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import psycopg
import pytest
from ds_schema.migrate import migrate
from mirror_support import (
    controls,
    delete_stream,
    items_rows,
    materialise,
    normalised_items,
    read_messages,
    wait_for_stream,
)
from sync_support import SyncProcess

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ds_stack.postgres.testing import ServerSource
    from sync_support import Streams


@pytest.fixture
def small_slots(postgres_source: ServerSource) -> Iterator[str]:
    with postgres_source.server({"max_slot_wal_keep_size": "1MB"}) as server:
        yield server.create_database("slots")


def wal(url: str, megabytes: float) -> None:
    """Write about this much WAL through a table no one mirrors."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS filler (payload text)")
        for _ in range(int(megabytes * 4)):
            conn.execute("INSERT INTO filler SELECT repeat('x', 1000) FROM generate_series(1, 240)")


def change_items(url: str, tag: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            f"INSERT INTO items (title) SELECT '{tag} ' || n FROM generate_series(1, 30) n"
        )
        conn.execute(f"UPDATE items SET body = '{tag}' WHERE id % 3 = 0")
        conn.execute("DELETE FROM items WHERE id % 7 = 0")


def wait_synced(server_url: str, url: str, what: str) -> None:
    expected = items_rows(url)
    wait_for_stream(
        server_url,
        "pg-items",
        lambda messages: normalised_items(materialise(messages, "items")) == expected,
        what=what,
    )


def slot_status(url: str) -> str:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT wal_status FROM pg_replication_slots").fetchone()
    assert row is not None
    return str(row[0])


def test_a_slot_holding_much_wal_warns_and_an_invalidated_one_resyncs(
    ds_server: str, streams: Streams, small_slots: str
) -> None:
    delete_stream(ds_server, "pg-items")
    with psycopg.connect(small_slots, autocommit=True) as conn:
        migrate(conn)
    sync = SyncProcess(ds_server, small_slots, f"{streams.bucket}/*")
    sync.env.update({"DS_SYNC__TABLES": "items", "DS_SYNC__SLOT_WARN_MB": "1"})
    try:
        sync.start()
        change_items(small_slots, "first")
        wait_synced(ds_server, small_slots, "the first changes")
        assert sync.stop() == 0

        # Down while 1.5 MB of WAL go by: the next start says the slot holds too much.
        change_items(small_slots, "second")
        wal(small_slots, 1.5)
        sync.start()
        wait_synced(ds_server, small_slots, "the changes made while down")
        assert "holds 2 MB of WAL" in sync.log() or "holds 1 MB of WAL" in sync.log()
        assert sync.stop() == 0

        # Down past the bound: Postgres invalidates the slot at a checkpoint.
        change_items(small_slots, "third")
        with psycopg.connect(small_slots, autocommit=True) as conn:
            conn.execute("SELECT pg_switch_wal()")
            wal(small_slots, 2)
            conn.execute("SELECT pg_switch_wal()")
            conn.execute("CHECKPOINT")
        assert slot_status(small_slots) == "lost"
        sync.start()
        wait_synced(ds_server, small_slots, "the table synced again")
        assert "was invalidated by Postgres" in sync.log()
        assert controls(read_messages(ds_server, "pg-items")) == [
            "snapshot-start",
            "snapshot-end",
            "reset",
            "snapshot-start",
            "snapshot-end",
        ]
        assert slot_status(small_slots) == "reserved"
        assert sync.stop() == 0
    finally:
        sync.kill()

"""ds-sync's Electric feed against Electric's real image on PostgreSQL 17 (Docker only).

The tests of sync/tests/integration/test_mirror_electric*.py replay recorded
exchanges; these talk to the real thing: the first sync, then inserts,
updates and deletes, and a restart of ds-sync resuming from its handle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import psycopg
import pytest
from ds_schema.migrate import migrate
from electric_docker import ELECTRIC_SECRET
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
    from electric_docker import ElectricStack

pytestmark = pytest.mark.docker


def change_items(url: str, tag: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"INSERT INTO items (title) SELECT '{tag} ' || n FROM generate_series(1, 9) n")
        conn.execute(f"UPDATE items SET body = '{tag}' WHERE id % 3 = 0")
        conn.execute("DELETE FROM items WHERE id % 7 = 0")


def wait_synced(server_url: str, postgres_url: str, what: str) -> list[dict[str, object]]:
    expected = items_rows(postgres_url)
    return wait_for_stream(
        server_url,
        "pg-items",
        lambda messages: normalised_items(materialise(messages, "items")) == expected,
        timeout=120,
        what=what,
    )


def test_the_electric_feed_mirrors_items_through_a_restart(
    electric: ElectricStack, ds_server: str, bucket: str
) -> None:
    delete_stream(ds_server, "pg-items")
    with psycopg.connect(electric.postgres_url, autocommit=True) as conn:
        migrate(conn)
    change_items(electric.postgres_url, "seed")
    env = {
        "DS_SYNC__TABLES": "items",
        "DS_SYNC__FEED": "electric",
        "ELECTRIC_URL": electric.electric_url,
        "DS_SYNC__ELECTRIC_SECRET": ELECTRIC_SECRET,
    }
    sync = SyncProcess(ds_server, electric.postgres_url, f"{bucket}/*", env=env)
    try:
        sync.start()
        wait_synced(ds_server, electric.postgres_url, "the first sync")
        change_items(electric.postgres_url, "live")
        wait_synced(ds_server, electric.postgres_url, "live changes")
        assert sync.stop() == 0
        change_items(electric.postgres_url, "while away")
        sync.start()
        messages = wait_synced(ds_server, electric.postgres_url, "changes made while away")
    finally:
        sync.kill()
    assert controls(messages)[:2] == ["snapshot-start", "snapshot-end"]
    assert duplicates(messages) == 0

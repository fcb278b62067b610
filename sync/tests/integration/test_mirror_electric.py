"""The Electric feed against RECORDED, SYNTHETIC exchanges (Electric can't run here).

``electric_fake.py`` serves ``electric_exchanges/items_live.json`` and, after
a simulated Electric restart, ``items_after_restart.json``: hand-written to
follow Electric's HTTP API and documented behaviour, not captured from a
running Electric. Each request ds-sync makes must be exactly the next one
recorded: the initial sync from ``offset=-1`` over two chunks, live
long-polls with handle, offset and cursor, a restart of ds-sync resuming
from its stored handle and offset, a dropped connection, a must-refetch in
the middle of the live stream, and Electric restarting without its shapes.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
from ds_schema.migrate import migrate
from ds_stack.ports import free_port
from mirror_support import (
    ElectricFake,
    controls,
    delete_stream,
    duplicates,
    materialise,
    read_messages,
)
from sync_support import wait_until

if TYPE_CHECKING:
    from collections.abc import Iterator

    from sync_support import SyncProcess

EXCHANGES = Path(__file__).resolve().parents[1] / "electric_exchanges"


@pytest.fixture
def electric() -> Iterator[ElectricFake]:
    fake = ElectricFake(free_port(), "replay", str(EXCHANGES / "items_live.json"))
    try:
        yield fake
    finally:
        fake.kill()


def item(n: int, title: str, body: str | None = None) -> dict[str, Any]:
    return {
        "id": n,
        "title": title,
        "body": body,
        "created_at": f"2026-11-26T10:00:0{n % 10}.12{n % 10}Z",
    }


def summary(messages: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Controls by name; changes as (operation, key, txid)."""
    found: list[tuple[Any, ...]] = []
    for message in messages:
        headers = message["headers"]
        if "control" in headers:
            found.append((headers["control"],))
        else:
            found.append((headers["operation"], message["key"], headers.get("txid")))
    return found


def test_recorded_exchanges_from_first_sync_to_electric_restart(
    sync: SyncProcess, ds_server: str, postgres_db: str, electric: ElectricFake
) -> None:
    delete_stream(ds_server, "pg-items")
    with psycopg.connect(postgres_db, autocommit=True) as conn:
        migrate(conn)  # ds-sync reads the primary key from the catalog
    electric.start()
    sync.env.update({"DS_SYNC__TABLES": "items", "ELECTRIC_URL": electric.url})
    sync.start()
    served = lambda: electric.get("/_fake/status")["served"]  # noqa: E731
    wait_until(lambda: served() == 7, what="the live request held open")
    assert sync.stop() == 0  # a clean restart: it resumes from the stored handle and offset
    sync.start()
    wait_until(lambda: served() == 14, timeout=30, what="the second shape's live request")
    status = electric.get("/_fake/status")
    assert status["mismatches"] == []
    electric.kill()  # Electric's host dies with a long-poll open
    electric.start("replay", str(EXCHANGES / "items_after_restart.json"))
    wait_until(lambda: served() == 3, timeout=30, what="the third shape synced")
    wait_until(
        lambda: len(read_messages(ds_server, "pg-items")) == 28, what="every message delivered"
    )
    status = electric.get("/_fake/status")
    assert status["mismatches"] == []
    messages = read_messages(ds_server, "pg-items")
    snapshot = [("insert", str(n), None) for n in (1, 2, 3, 4, 5)]
    assert summary(messages) == [
        ("snapshot-start",),
        *snapshot,
        ("snapshot-end",),
        ("insert", "6", "750"),
        ("update", "1", "750"),
        ("delete", "2", "751"),
        ("reset",),
        ("snapshot-start",),
        *[("insert", str(n), None) for n in (1, 3, 4, 5, 6)],
        ("snapshot-end",),
        ("insert", "8", "760"),
        ("reset",),
        ("snapshot-start",),
        *[("insert", str(n), None) for n in (1, 3, 4, 5, 6, 8)],
        ("snapshot-end",),
    ]
    # Values are read with electric-schema: the int4 id a number, the timestamp RFC 3339.
    assert messages[1]["value"] == item(1, "first")
    update = messages[8]
    assert update["value"] == item(1, "first, edited")
    assert update["old_value"] == item(1, "first")
    delete = messages[9]
    assert delete["value"] is None
    assert delete["old_value"] == item(2, "second", "b/2")
    for message in messages:
        if "control" not in message["headers"]:
            assert message["headers"]["timestamp"].endswith("Z")
    assert materialise(messages, "items") == {
        "1": item(1, "first, edited"),
        "3": item(3, "third"),
        "4": item(4, "fourth"),
        "5": item(5, "fifth"),
        "6": item(6, "sixth", "new"),
        "8": item(8, "eighth"),
    }
    assert duplicates(messages) == 0
    assert controls(messages).count("reset") == 2
    assert "must-refetch" in sync.log()
    assert sync.stop() == 0

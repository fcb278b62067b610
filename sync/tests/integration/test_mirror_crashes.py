"""ds-sync SIGKILLed at each step of delivering a batch, then restarted with other batch sizes.

The failpoints (``DS_SYNC_FAILPOINTS``) kill the process right after a
batch is staged, after its first POST body, after all its POSTs, and after
its commit. More changes are written while ds-sync is down, and the
restarted process cuts its batches differently (larger, or smaller, than
the batch that was in flight). Every change must reach pg-items once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import psycopg
from ds_schema.migrate import migrate
from mirror_support import (
    changes,
    controls,
    delete_stream,
    duplicates,
    items_rows,
    materialise,
    mirror_row,
    normalised_items,
    wait_for_stream,
)

if TYPE_CHECKING:
    from sync_support import SyncProcess

# (failpoint, its pass that kills, rows per feed batch): batch sizes alternate, so the
# process after a crash cuts its batches otherwise than the one that died.
SCENARIOS = [
    ("mirror.staged", 3, 7),
    ("mirror.posted-body", 2, 5000),
    ("mirror.posted", 2, 7),
    ("mirror.committed", 1, 5000),
]


def write(url: str, first: int, count: int) -> int:
    """``count`` inserts, single and in a bulk, plus an update per row; the changes made."""
    with psycopg.connect(url, autocommit=True) as conn:
        for n in range(first, first + count // 2):
            conn.execute("INSERT INTO items (title, body) VALUES (%s, %s)", (f"t{n}", "x" * 300))
        conn.execute(
            "INSERT INTO items (title) SELECT 'bulk ' || n "
            "FROM generate_series(%s::int, %s::int) AS n",
            (first, first + count - count // 2 - 1),
        )
        updated = conn.execute("UPDATE items SET body = title WHERE body IS NULL").rowcount
    return count + updated


def last_segment(messages: list[dict[str, object]]) -> list[dict[str, object]]:
    """The messages after the last reset."""
    resets = [n for n, m in enumerate(messages) if m.get("headers") == {"control": "reset"}]
    return messages[resets[-1] + 1 :] if resets else messages


def test_each_crash_point_delivers_every_change_once(
    sync: SyncProcess, ds_server: str, postgres_db: str
) -> None:
    delete_stream(ds_server, "pg-items")
    with psycopg.connect(postgres_db, autocommit=True) as conn:
        migrate(conn)
        conn.execute("INSERT INTO items (title) SELECT 'old ' || n FROM generate_series(1, 20) n")
    sync.env.update({"DS_SYNC__TABLES": "items", "DS_SYNC__POST_MAX_BYTES": "1024"})

    # Killed after the first chunk of the first sync: a snapshot can't be resumed, so the
    # next process sends a reset and the whole snapshot again.
    sync.env.update({"DS_SYNC_FAILPOINTS": "mirror.committed=1", "DS_SYNC__FEED_BATCH_ROWS": "7"})
    sync.start(wait=False)
    assert sync.process is not None
    assert sync.process.wait(timeout=30) == -9, sync.log()
    sync.process = None
    del sync.env["DS_SYNC_FAILPOINTS"]
    sync.start()
    wait_for_stream(
        ds_server,
        "pg-items",
        lambda messages: (
            controls(messages) == ["snapshot-start", "reset", "snapshot-start", "snapshot-end"]
        ),
        what="the first sync again, after a reset",
    )
    assert sync.stop() == 0

    made = 0
    # Each start recovers what the previous process left, then dies at the next point.
    for number, (point, passes, rows) in enumerate(SCENARIOS):
        sync.env.update(
            {"DS_SYNC_FAILPOINTS": f"{point}={passes}", "DS_SYNC__FEED_BATCH_ROWS": str(rows)}
        )
        sync.start(wait=False)
        made += write(postgres_db, number * 1000, 40)
        assert sync.process is not None
        assert sync.process.wait(timeout=30) == -9, f"{point} not reached:\n{sync.log()}"
        sync.process = None
        row = mirror_row(postgres_db, "public.items")
        assert row is not None
        assert row["pending"] == (point != "mirror.committed"), point
        made += write(postgres_db, number * 1000 + 500, 20)  # while ds-sync is down
    del sync.env["DS_SYNC_FAILPOINTS"]
    sync.env["DS_SYNC__FEED_BATCH_ROWS"] = "5000"
    sync.start()
    expected = items_rows(postgres_db)
    messages = wait_for_stream(
        ds_server,
        "pg-items",
        lambda messages: normalised_items(materialise(messages, "items")) == expected,
        what="pg-items = items after the crashes",
    )
    assert sync.stop() == 0
    assert sync.log().count("sending again the") == 3  # after staged, posted-body and posted
    assert controls(messages) == ["snapshot-start", "reset", "snapshot-start", "snapshot-end"]
    assert duplicates(messages) == 0
    assert len(changes(last_segment(messages))) == 20 + made

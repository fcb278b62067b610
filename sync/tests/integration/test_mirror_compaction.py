"""Compaction of pg-items: history goes, every kind of reader still ends with exactly the table.

A small table churned by inserts, updates and deletes writes many times the
compaction policy's bytes. Meanwhile a follower reads from the stream's
start; afterwards come a late reader (the bootstrap), a reader whose offset
fell behind retention (410) and the official ``@durable-streams/state``
``MaterializedState`` reading as docs/sync.md says. ds-sync is also killed
at each step of a compaction (``test_a_compaction_killed_at_each_step``).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

import httpx
import psycopg
from ds_schema.migrate import discover, migrate
from ds_sync.mirror.state import MirrorStore
from mirror_support import (
    Follower,
    NodeReader,
    bootstrap_state,
    changes,
    controls,
    delete_stream,
    duplicates,
    items_rows,
    materialise,
    mirror_row,
    node_materialise,
    normalised_items,
    wait_for_stream,
)
from psycopg_pool import AsyncConnectionPool
from sync_support import wait_until

if TYPE_CHECKING:
    from sync_support import SyncProcess

COMPACT = 32 * 1024
ROWS = 40


def churn(url: str, rng: random.Random, ops: int) -> int:
    """``ops`` random inserts, updates and deletes over about ``ROWS`` rows; rows changed."""
    changed = 0
    with psycopg.connect(url, autocommit=True) as conn:
        for n in range(ops):
            ids = [row[0] for row in conn.execute("SELECT id FROM items").fetchall()]
            roll = rng.random()
            if len(ids) < ROWS // 2 or (roll < 0.35 and len(ids) < ROWS):
                conn.execute("INSERT INTO items (title, body) VALUES (%s, %s)", (f"n{n}", "b" * 80))
                changed += 1
            elif roll < 0.8:
                changed += conn.execute(
                    "UPDATE items SET title = %s, body = %s WHERE id = %s",
                    (f"u{n}", "u" * rng.randint(0, 200), rng.choice(ids)),
                ).rowcount
            else:
                changed += conn.execute(
                    "DELETE FROM items WHERE id = %s", (rng.choice(ids),)
                ).rowcount
    return changed


def start_mirror(sync: SyncProcess, ds_server: str, postgres_db: str) -> int:
    """pg-items from scratch, compacted every ``COMPACT`` bytes; the rows seeded."""
    delete_stream(ds_server, "pg-items")
    with psycopg.connect(postgres_db, autocommit=True) as conn:
        migrate(conn)
        conn.execute("INSERT INTO items (title) SELECT 'seed ' || n FROM generate_series(1, 30) n")
    sync.env.update({"DS_SYNC__TABLES": "items", "DS_SYNC__COMPACT_AFTER_BYTES": str(COMPACT)})
    sync.start()
    # The first sync delivered: later changes each become a change message.
    wait_for_stream(
        ds_server,
        "pg-items",
        lambda messages: controls(messages) == ["snapshot-start", "snapshot-end"],
        what="the first sync of items",
    )
    return 30


def settled(ds_server: str, postgres_db: str, follower: Follower) -> None:
    """Wait until the follower and a late reader both have exactly the table."""
    expected = items_rows(postgres_db)
    wait_until(
        lambda: normalised_items(materialise(follower.messages, "items")) == expected,
        timeout=60,
        what="the follower has the table",
    )
    wait_until(
        lambda: normalised_items(bootstrap_state(ds_server, "pg-items")[0]) == expected,
        what="a late reader has the table",
    )


def test_compaction_bounds_catch_up_and_every_reader_has_the_table(
    sync: SyncProcess, ds_server: str, postgres_db: str
) -> None:
    made = start_mirror(sync, ds_server, postgres_db)
    follower = Follower(ds_server, "pg-items")
    follower.start()
    rng = random.Random(27)
    made += churn(postgres_db, rng, 1500)
    settled(ds_server, postgres_db, follower)
    follower.stop()
    expected = items_rows(postgres_db)

    # The follower read on through every compaction: no 410, nothing lost or twice.
    assert follower.gone == 0
    assert duplicates(follower.messages) == 0
    assert len(changes(follower.messages)) == made
    history = int(httpx.head(f"{ds_server}/v1/stream/pg-items").headers["Stream-Next-Offset"])
    compactions = [
        float(line.rsplit(" ", 1)[1])
        for line in sync.metrics().splitlines()
        if line.startswith('ds_sync_table_compactions_total{table="items"}')
    ]
    assert compactions, sync.metrics()
    assert compactions[0] >= 5, sync.log()

    # A late reader gets the table and the recent changes: bounded by the table and the
    # policy, not by the history (which is many times the policy's bytes).
    state, size, snapshot_offset = bootstrap_state(ds_server, "pg-items")
    assert normalised_items(state) == expected
    assert snapshot_offset > 0
    table_bytes = sum(len(str(row)) for row in expected.values())
    assert history > 10 * COMPACT
    assert size < 3 * table_bytes + 2 * COMPACT, (size, table_bytes, history)

    # A reader whose offset retention passed is told so, and restarts from the bootstrap.
    gone = httpx.get(f"{ds_server}/v1/stream/pg-items", params={"offset": "-1"})
    assert gone.status_code == 410

    # The official State Protocol package, reading as docs/sync.md says.
    read = node_materialise(ds_server, "pg-items")
    assert normalised_items(read["rows"]) == expected
    assert read["bootstraps"] == 1
    assert sync.stop() == 0


def test_the_official_reader_keeps_up_through_compactions(
    sync: SyncProcess, ds_server: str, postgres_db: str
) -> None:
    start_mirror(sync, ds_server, postgres_db)
    rng = random.Random(28)
    churn(postgres_db, rng, 300)
    # Joining after compactions: it bootstraps, then follows through more of them.
    reader = NodeReader(f"{ds_server}/v1/stream/pg-items", until="title=the end")
    # Node starts slowly on a loaded machine: the churn below is meant for a follower.
    reader.wait_bootstrapped()
    churn(postgres_db, rng, 600)
    with psycopg.connect(postgres_db, autocommit=True) as conn:
        conn.execute("INSERT INTO items (title) VALUES ('the end')")
    read = reader.result()
    assert normalised_items(read["rows"]) == items_rows(postgres_db)
    assert read["bootstraps"] == 1  # it kept following: never sent back by a 410
    assert sync.stop() == 0


def test_a_compaction_killed_at_each_step(
    sync: SyncProcess, ds_server: str, postgres_db: str
) -> None:
    made = start_mirror(sync, ds_server, postgres_db)
    follower = Follower(ds_server, "pg-items")
    follower.start()
    rng = random.Random(29)
    assert sync.stop() == 0
    for point in ("mirror.compaction-folded", "mirror.compaction-published"):
        sync.env["DS_SYNC_FAILPOINTS"] = f"{point}=1"
        sync.start(wait=False)
        made += churn(postgres_db, rng, 400)
        assert sync.process is not None
        assert sync.process.wait(timeout=60) == -9, f"{point} not reached:\n{sync.log()}"
        sync.process = None
        row = mirror_row(postgres_db, "public.items")
        assert row is not None
        assert not row["pending"], point  # between batches: nothing staged
    del sync.env["DS_SYNC_FAILPOINTS"]
    sync.start()
    made += churn(postgres_db, rng, 200)
    settled(ds_server, postgres_db, follower)
    follower.stop()
    assert follower.gone == 0
    assert duplicates(follower.messages) == 0
    assert len(changes(follower.messages)) == made
    assert sync.stop() == 0
    # Killed after publishing, before recording it: a later start recorded it.
    head = httpx.head(f"{ds_server}/v1/stream/pg-items")
    with psycopg.connect(postgres_db) as conn:
        recorded = conn.execute(
            "SELECT snapshot_offset FROM sync_mirrors WHERE table_name = 'public.items'"
        ).fetchone()
    assert recorded == (head.headers["Stream-Snapshot-Offset"],)


async def test_a_mirror_row_from_before_snapshots_were_recorded_loads(postgres_db: str) -> None:
    # sync_mirrors as migrations up to 0005 made it, with a row written then.
    with psycopg.connect(postgres_db, autocommit=True) as conn:
        migrate(conn, [m for m in discover() if m.version <= 5])
        conn.execute(
            "INSERT INTO sync_mirrors (table_name, stream, feed, producer_id, producer_epoch, "
            "next_seq, position) VALUES ('public.items', 'pg-items', 'native', 'p', 5, 3, '{}')"
        )
        migrate(conn)
    async with AsyncConnectionPool(postgres_db, kwargs={"autocommit": True}) as pool:
        from ds_sync.table_names import parse_tables

        [table] = parse_tables("items")
        state = await MirrorStore(pool).load(table, "native", "p")
        assert (state.epoch, state.next_seq, state.snapshot) == (5, 3, None)
        await MirrorStore(pool).record_snapshot("public.items", "00000000000000000100")
        state = await MirrorStore(pool).load(table, "native", "p")
        assert state.snapshot is not None
        assert state.snapshot[0] == "00000000000000000100"

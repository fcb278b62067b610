"""The native feed under SIGKILL: 4 writers, 5,000 random changes each, 5 kills of ds-sync.

Writers insert, update and delete rows of ``items`` (each op's title is
unique, so no two change messages are rightly the same). ds-sync is
SIGKILLed at 5 random moments and restarted at once. At the end,
materialising pg-items gives exactly the table, the stream holds exactly
as many change messages as rows changed, and none twice.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import TYPE_CHECKING

import psycopg
from ds_sync.migrate import migrate
from mirror_support import (
    changes,
    controls,
    delete_stream,
    duplicates,
    items_rows,
    materialise,
    normalised_items,
    wait_for_stream,
)
from sync_support import wait_until

if TYPE_CHECKING:
    import pytest
    from sync_support import SyncProcess

WRITERS = 4
OPS_PER_WRITER = 5_000
KILLS = 5


async def writer(url: str, number: int, rng: random.Random, progress: list[int]) -> int:
    """``OPS_PER_WRITER`` random ops on rows of its own, 1 to 3 per transaction; rows changed."""
    changed = 0
    mine: list[int] = []
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        # Commit order, not durability, is what this test is about.
        await conn.execute("SET synchronous_commit = off")
        done = 0
        while done < OPS_PER_WRITER:
            async with conn.transaction():
                for _ in range(min(rng.randint(1, 3), OPS_PER_WRITER - done)):
                    title = f"w{number}-{done}"
                    roll = rng.random()
                    if roll < 0.45 or len(mine) < 5:
                        cursor = await conn.execute(
                            "INSERT INTO items (title, body) VALUES (%s, %s) RETURNING id",
                            (title, rng.choice([None, "b" * rng.randint(1, 200)])),
                        )
                        row = await cursor.fetchone()
                        assert row is not None
                        mine.append(row[0])
                        changed += 1
                    elif roll < 0.8:
                        cursor = await conn.execute(
                            "UPDATE items SET title = %s, body = %s WHERE id = %s",
                            (title, rng.choice([None, "u"]), rng.choice(mine)),
                        )
                        changed += cursor.rowcount
                    else:
                        victim = mine.pop(rng.randrange(len(mine)))
                        cursor = await conn.execute("DELETE FROM items WHERE id = %s", (victim,))
                        changed += cursor.rowcount
                    done += 1
                    progress[0] += 1
    return changed


async def kill_at(sync: SyncProcess, thresholds: list[int], progress: list[int]) -> list[int]:
    """SIGKILL ds-sync when the writers pass each threshold; restart it at once."""
    killed_at = []
    for threshold in thresholds:
        while progress[0] < threshold:  # noqa: ASYNC110 - a plain counter; polling is simplest
            await asyncio.sleep(0.005)
        sync.kill()
        killed_at.append(progress[0])
        await asyncio.to_thread(sync.start, wait=False)
    return killed_at


async def run_load(sync: SyncProcess, url: str, seed: int) -> tuple[int, list[int]]:
    rng = random.Random(seed)
    total = WRITERS * OPS_PER_WRITER
    thresholds = sorted(rng.sample(range(total // 20, total - total // 20), KILLS))
    progress = [0]
    writers = [writer(url, n, random.Random(seed * 100 + n), progress) for n in range(WRITERS)]
    killer = asyncio.ensure_future(kill_at(sync, thresholds, progress))
    changed = await asyncio.gather(*writers)
    return sum(changed), await killer


def test_sigkill_loses_and_doubles_no_change(
    sync: SyncProcess, ds_server: str, postgres_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    delete_stream(ds_server, "pg-items")
    with psycopg.connect(postgres_db, autocommit=True) as conn:
        migrate(conn)
    sync.env["DS_SYNC__TABLES"] = "items"
    sync.start()
    wait_for_stream(
        ds_server,
        "pg-items",
        lambda messages: controls(messages) == ["snapshot-start", "snapshot-end"],
        what="the first sync",
    )
    seed = random.randrange(1_000_000)
    started = time.monotonic()
    made, killed_at = asyncio.run(run_load(sync, postgres_db, seed))
    wrote_in = time.monotonic() - started
    wait_until(lambda: sync.process is None or sync.ready(), timeout=30, what="last restart")
    expected = items_rows(postgres_db)
    messages = wait_for_stream(
        ds_server,
        "pg-items",
        lambda messages: normalised_items(materialise(messages, "items")) == expected,
        timeout=90,
        what="pg-items materialised = SELECT * FROM items",
    )
    caught_up_in = time.monotonic() - started
    assert sync.stop() == 0
    delivered = len(changes(messages))
    doubled = duplicates(messages)
    state = materialise(messages, "items")
    with capsys.disabled():
        print(
            f"\nnative kill test (seed {seed}): {WRITERS} writers made "
            f"{WRITERS * OPS_PER_WRITER:,} random ops ({made:,} row changes) in "
            f"{wrote_in:.1f}s; ds-sync SIGKILLed "
            f"{len(killed_at)} times (after {', '.join(map(str, killed_at))} ops) and restarted; "
            f"pg-items holds {delivered:,} change messages: {made - delivered + doubled} lost, "
            f"{doubled} duplicated; materialised {len(state):,} rows = the table's "
            f"{len(expected):,}; caught up {caught_up_in:.1f}s after the first op"
        )
    assert len(killed_at) == KILLS
    assert controls(messages) == ["snapshot-start", "snapshot-end"]
    assert (delivered, doubled) == (made, 0)
    assert normalised_items(state) == expected

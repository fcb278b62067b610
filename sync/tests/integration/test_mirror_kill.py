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
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import psycopg
from ds_schema.migrate import migrate
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
from sync_support import kill_at, wait_until

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    import pytest
    from sync_support import SyncProcess

Killed = TypeVar("Killed")

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


async def write_and_kill(
    url: str, seed: int, killer: Callable[[list[int], list[int]], Awaitable[Killed]]
) -> tuple[int, Killed]:
    """``WRITERS`` writers make their ops; ``killer`` gets ``KILLS`` random points of the run
    (away from its ends) and the ops done so far. The rows changed, and what ``killer`` says."""
    rng = random.Random(seed)
    total = WRITERS * OPS_PER_WRITER
    thresholds = sorted(rng.sample(range(total // 20, total - total // 20), KILLS))
    progress = [0]
    writers = [writer(url, n, random.Random(seed * 100 + n), progress) for n in range(WRITERS)]
    killing = asyncio.ensure_future(killer(thresholds, progress))
    changed = await asyncio.gather(*writers)
    return sum(changed), await killing


def prepare(ds_server: str, postgres_db: str) -> None:
    """No pg-items from an earlier test; the schema in place."""
    delete_stream(ds_server, "pg-items")
    with psycopg.connect(postgres_db, autocommit=True) as conn:
        migrate(conn)


def first_sync(ds_server: str) -> None:
    wait_for_stream(
        ds_server,
        "pg-items",
        lambda messages: controls(messages) == ["snapshot-start", "snapshot-end"],
        what="the first sync",
    )


@dataclass(frozen=True, slots=True)
class Delivered:
    """pg-items against the table and the rows changed."""

    made: int  # row changes the writers made
    messages: list[dict[str, Any]]
    expected: dict[str, dict[str, Any]]  # SELECT * FROM items, by key

    @property
    def delivered(self) -> int:
        return len(changes(self.messages))

    @property
    def doubled(self) -> int:
        return duplicates(self.messages)

    def __str__(self) -> str:
        lost = self.made - self.delivered + self.doubled
        return (
            f"pg-items holds {self.delivered:,} change messages: {lost} lost, {self.doubled} "
            f"duplicated; materialised {len(materialise(self.messages, 'items')):,} rows = the "
            f"table's {len(self.expected):,}"
        )

    def check(self) -> None:
        assert controls(self.messages) == ["snapshot-start", "snapshot-end"]
        assert (self.delivered, self.doubled) == (self.made, 0)
        assert normalised_items(materialise(self.messages, "items")) == self.expected


def delivered(ds_server: str, postgres_db: str, made: int) -> Delivered:
    """Once pg-items materialises to the table."""
    expected = items_rows(postgres_db)
    messages = wait_for_stream(
        ds_server,
        "pg-items",
        lambda messages: normalised_items(materialise(messages, "items")) == expected,
        timeout=90,
        what="pg-items materialised = SELECT * FROM items",
    )
    return Delivered(made, messages, expected)


def test_sigkill_loses_and_doubles_no_change(
    sync: SyncProcess, ds_server: str, postgres_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    prepare(ds_server, postgres_db)
    sync.env["DS_SYNC__TABLES"] = "items"
    sync.start()
    first_sync(ds_server)
    seed = random.randrange(1_000_000)
    started = time.monotonic()
    made, killed_at = asyncio.run(write_and_kill(postgres_db, seed, partial(kill_at, sync)))
    wrote_in = time.monotonic() - started
    wait_until(lambda: sync.process is None or sync.ready(), timeout=30, what="last restart")
    found = delivered(ds_server, postgres_db, made)
    caught_up_in = time.monotonic() - started
    assert sync.stop() == 0
    with capsys.disabled():
        print(
            f"\nnative kill test (seed {seed}): {WRITERS} writers made "
            f"{WRITERS * OPS_PER_WRITER:,} random ops ({made:,} row changes) in "
            f"{wrote_in:.1f}s; ds-sync SIGKILLed "
            f"{len(killed_at)} times (after {', '.join(map(str, killed_at))} ops) and restarted; "
            f"{found}; caught up {caught_up_in:.1f}s after the first op"
        )
    assert len(killed_at) == KILLS
    found.check()

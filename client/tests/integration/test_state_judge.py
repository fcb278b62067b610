"""Python's MaterializedState against @durable-streams/state on the same pg-items.

ds-sync mirrors a real Postgres ``items`` table to ``pg-items`` (through
Envoy) while a random workload changes it; a Python ``StateFollower``
follows live throughout, another resumes from a state and offset saved
mid-way, and Node materialises the finished stream with the official
library. All of them must hold exactly the table.
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
from ds_schema.migrate import migrate
from ds_stack import components
from ds_stack.launcher import Process
from ds_stack.ports import free_port
from durable_sessions import MaterializedState, StateFollower

if TYPE_CHECKING:
    from sdk_stack import SdkStack

JUDGE = Path(__file__).resolve().parents[3] / "tests" / "node" / "materialize.mjs"


def _rows(postgres_url: str) -> dict[str, dict[str, Any]]:
    """SELECT * FROM items, keyed and valued as sessions.md §4 maps rows (times normalised)."""
    with psycopg.connect(postgres_url) as conn:
        rows = conn.execute("SELECT id, title, body, created_at FROM items").fetchall()
    return {
        str(id_): {"id": id_, "title": title, "body": body, "created_at": created.astimezone(UTC)}
        for id_, title, body, created in rows
    }


def _normalised(items: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        key: {**value, "created_at": datetime.fromisoformat(value["created_at"]).astimezone(UTC)}
        for key, value in items.items()
    }


def _workload(postgres_url: str, rng: random.Random, transactions: int) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        for n in range(transactions):
            ids = [r[0] for r in conn.execute("SELECT id FROM items").fetchall()]
            with conn.transaction():
                for k in range(rng.randint(1, 4)):
                    roll = rng.random()
                    if roll < 0.45 or not ids:
                        conn.execute(
                            "INSERT INTO items (title, body) VALUES (%s, %s)",
                            (f"t{n}.{k}", rng.choice([None, "b" * rng.randint(0, 500)])),
                        )
                    elif roll < 0.8:
                        conn.execute(
                            "UPDATE items SET title = %s, body = %s WHERE id = %s",
                            (f"u{n}.{k}", rng.choice([None, "x", "é"]), rng.choice(ids)),
                        )
                    else:
                        conn.execute("DELETE FROM items WHERE id = %s", (rng.choice(ids),))


class Following:
    """A follower iterated in a task of its own; ``changed`` is set after each batch."""

    def __init__(self, follower: StateFollower) -> None:
        self.follower = follower
        self.changed = asyncio.Event()
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        async for _ in self.follower:
            self.changed.set()

    async def caught_up(self, expected: dict[str, Any], within: float = 60) -> None:
        async def check() -> None:
            while _normalised(self.follower.state.get_type("items")) != expected:
                self.changed.clear()
                await self.changed.wait()

        await asyncio.wait_for(check(), within)

    def stop(self) -> None:
        self._task.cancel()


@pytest.fixture
def items_mirror(sdk_stack: SdkStack, postgres_db: str, tmp_path: Path) -> Any:
    """A fresh pg-items, and ds-sync mirroring the test's database to it through Envoy."""
    with sdk_stack.client() as http:
        assert http.delete("/v1/stream/pg-items").status_code in (204, 404)
    with psycopg.connect(postgres_db, autocommit=True) as conn:
        migrate(conn)
        conn.execute("INSERT INTO items (title) SELECT 'seed ' || n FROM generate_series(1, 40) n")
    spec = components.ds_sync(
        server_url=sdk_stack.url,
        postgres_url=postgres_db,
        metrics_port=free_port(),
        token=sdk_stack.token,
        env={
            "DS_SYNC__TABLES": "items",
            # Session streams are not this test's business: a bucket nobody writes.
            "DS_SYNC__STREAMS": f"{sdk_stack.new_bucket()}/*",
            "DS_SYNC__NAME": "judge" + uuid.uuid4().hex[:8],
            "DS_SYNC__RESCAN_SECS": "600",
        },
        log_path=tmp_path / "ds-sync.log",
    )
    with Process(spec):  # started, and stopped on exit
        yield f"{sdk_stack.url}/v1/stream/pg-items"


async def test_python_and_the_official_library_materialise_the_same_table(
    sdk_stack: SdkStack, postgres_db: str, items_mirror: str
) -> None:
    rng = random.Random(30)
    url = items_mirror
    live = StateFollower(url, token=sdk_stack.token)
    following = Following(live)
    try:
        await asyncio.to_thread(_workload, postgres_db, rng, 150)
        await following.caught_up(_rows(postgres_db))
        saved_state, saved_offset = live.state.to_dict(), live.offset
        await asyncio.to_thread(_workload, postgres_db, rng, 150)
        expected = _rows(postgres_db)
        await following.caught_up(expected)
    finally:
        following.stop()

    restored = MaterializedState()
    restored.load(saved_state)
    resumed = StateFollower(url, state=restored, offset=saved_offset, token=sdk_stack.token)
    resuming = Following(resumed)
    try:
        await resuming.caught_up(expected)
    finally:
        resuming.stop()

    judged = await asyncio.to_thread(
        subprocess.run,
        ["node", str(JUDGE), url, "items", "-", f"Bearer {sdk_stack.token}"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    official = json.loads(judged.stdout)
    assert official["applied"] > 300
    assert {"items": official["rows"]} == live.state.to_dict() == resumed.state.to_dict()
    assert _normalised(official["rows"]) == expected

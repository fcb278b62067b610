"""The Electric feed under SIGKILL, against a SYNTHETIC Electric (Electric can't run here).

``electric_fake.py`` in synthetic mode keeps a shape log of ``items`` that
the writers here fill, and serves it as Electric's HTTP API describes. Two
writers make 2,000 random changes while ds-sync is SIGKILLed at 5 random
moments, the shape is rotated once (must-refetch in the middle of the
live stream), and the stand-in restarts twice: once keeping its shapes,
once losing them (a new handle). At the end pg-items materialises to the
stand-in's rows, and after the last reset it holds exactly the shape's
log, in order: nothing lost, nothing twice.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import psycopg
from ds_schema.migrate import migrate
from ds_stack.ports import free_port
from mirror_support import (
    ElectricFake,
    controls,
    delete_stream,
    duplicates,
    materialise,
    wait_for_stream,
)
from sync_support import wait_until

if TYPE_CHECKING:
    import pytest
    from sync_support import SyncProcess

WRITERS = 2
OPS_PER_WRITER = 1_000
KILLS = 5


class Gate:
    """Lets writers through, or holds them while the stand-in restarts (as a database's
    clients wait while it is down: no transaction is half-made)."""

    def __init__(self) -> None:
        self.open = asyncio.Event()
        self.open.set()
        self.inside = 0
        self.left = asyncio.Condition()

    async def enter(self) -> None:
        await self.open.wait()
        self.inside += 1

    async def leave(self) -> None:
        async with self.left:
            self.inside -= 1
            self.left.notify_all()

    async def close(self) -> None:
        self.open.clear()
        async with self.left:
            await self.left.wait_for(lambda: self.inside == 0)


async def writer(
    electric: ElectricFake, number: int, rng: random.Random, progress: list[int], gate: Gate
) -> None:
    """Random transactions of 1 to 3 ops on rows of its own, posted to the stand-in."""
    mine: dict[int, dict[str, Any]] = {}
    next_id = number * 1_000_000
    done = 0
    async with httpx.AsyncClient(timeout=10) as http:
        while done < OPS_PER_WRITER:
            ops = []
            for _ in range(min(rng.randint(1, 3), OPS_PER_WRITER - done)):
                title = f"w{number}-{done}"
                roll = rng.random()
                free = [k for k in mine if k not in {op["row"]["id"] for op in ops}]
                if roll < 0.45 or len(free) < 3:
                    next_id += 1
                    row = {
                        "id": next_id,
                        "title": title,
                        "body": rng.choice([None, "b/" + "x" * rng.randint(0, 50)]),
                        "created_at": f"2026-11-26 10:{done % 60:02d}:00.{done % 1000:03d}+00",
                    }
                    mine[next_id] = row
                    ops.append({"op": "insert", "row": row})
                elif roll < 0.8:
                    key = rng.choice(free)
                    mine[key] = {**mine[key], "title": title}
                    ops.append({"op": "update", "row": {"id": key, "title": title}})
                else:
                    key = rng.choice(free)
                    del mine[key]
                    ops.append({"op": "delete", "row": {"id": key}})
                done += 1
            await gate.enter()
            try:
                response = await http.post(f"{electric.url}/_fake/transaction", json={"ops": ops})
            finally:
                await gate.leave()
            assert response.status_code == 200, response.text
            progress[0] += len(ops)
            await asyncio.sleep(0.004)


async def disturb(
    sync: SyncProcess,
    electric: ElectricFake,
    plan: list[tuple[int, str]],
    progress: list[int],
    gate: Gate,
) -> list[str]:
    """At each progress threshold: SIGKILL ds-sync (restarted at once), rotate the shape, or
    restart the stand-in with or without its shapes."""
    done = []
    for threshold, action in plan:
        while progress[0] < threshold:  # noqa: ASYNC110 - a plain counter; polling is simplest
            await asyncio.sleep(0.005)
        if action == "kill":
            sync.kill()
            await asyncio.to_thread(sync.start, wait=False)
        elif action == "rotate":
            await asyncio.to_thread(electric.post, "/_fake/rotate", {})
        else:
            await gate.close()
            await asyncio.to_thread(electric.post, "/_fake/save", {})
            electric.kill()
            fresh = ["--fresh-handle"] if action == "restart-losing-shapes" else []
            await asyncio.to_thread(electric.start, *fresh, *electric.args)
            gate.open.set()
        done.append(f"{action}@{progress[0]}")
    return done


def expected_items(rows: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        key: {
            "id": int(row["id"]),
            "title": row["title"],
            "body": row["body"],
            "created_at": row["created_at"].replace(" ", "T").replace("+00", "Z"),
        }
        for key, row in rows.items()
    }


def test_sigkill_with_electric_loses_and_doubles_nothing(
    sync: SyncProcess, ds_server: str, postgres_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    delete_stream(ds_server, "pg-items")
    with psycopg.connect(postgres_db, autocommit=True) as conn:
        migrate(conn)  # ds-sync reads the primary key from the catalog
    state = Path(tempfile.mkdtemp(prefix="electric-fake-")) / "shape.json"
    electric = ElectricFake(free_port(), "synthetic", str(state))
    try:
        electric.start()
        sync.env.update({"DS_SYNC__TABLES": "items", "ELECTRIC_URL": electric.url})
        sync.start()
        seed = random.randrange(1_000_000)
        rng = random.Random(seed)
        total = WRITERS * OPS_PER_WRITER
        moments = sorted(rng.sample(range(total // 20, total - total // 20), KILLS + 3))
        actions = ["kill"] * KILLS + ["rotate", "restart-keeping-shapes", "restart-losing-shapes"]
        rng.shuffle(actions)
        plan = list(zip(moments, actions, strict=True))
        progress = [0]
        started = time.monotonic()

        async def run() -> list[str]:
            gate = Gate()
            writers = [
                writer(electric, n, random.Random(seed * 10 + n), progress, gate)
                for n in range(WRITERS)
            ]
            disturbances = asyncio.ensure_future(disturb(sync, electric, plan, progress, gate))
            await asyncio.gather(*writers)
            return await disturbances

        done = asyncio.run(run())
        wait_until(lambda: sync.process is None or sync.ready(), timeout=30, what="last restart")
        rows = expected_items(electric.get("/_fake/rows"))
        log = [
            (str(m["headers"]["txids"][0]), str(m["value"]["id"]), m["headers"]["operation"])
            for _, m in electric.get("/_fake/log")
        ]
        messages = wait_for_stream(
            ds_server,
            "pg-items",
            lambda messages: (
                materialise(messages, "items") == rows
                and len(_after_last_snapshot(messages)) >= len(log)
            ),
            timeout=60,
            what="pg-items materialised = the shape's rows, its whole log delivered",
        )
        took = time.monotonic() - started
        assert sync.stop() == 0
    finally:
        electric.kill()
    streamed = [
        (m["headers"]["txid"], m["key"], m["headers"]["operation"])
        for m in _after_last_snapshot(messages)
    ]
    doubled = duplicates(messages)
    resets = controls(messages).count("reset")
    with capsys.disabled():
        print(
            f"\nelectric kill test (seed {seed}, synthetic Electric): {WRITERS} writers made "
            f"{total:,} random ops; {', '.join(done)}; pg-items: {resets} resets, the last "
            f"shape's log of {len(log):,} changes delivered as {len(streamed):,} "
            f"({len(set(log) - set(streamed))} lost), {doubled} duplicated between resets; "
            f"materialised {len(rows):,} rows = the shape's; {took:.1f}s"
        )
    assert [a.split("@")[0] for a in done].count("kill") == KILLS
    # The rotation and the restart that lost the shapes each make ds-sync's handle stale;
    # when both come before ds-sync asks again, it sees one must-refetch.
    assert resets >= 1
    assert streamed == log
    assert doubled == 0


def _after_last_snapshot(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ends = [n for n, m in enumerate(messages) if m["headers"].get("control") == "snapshot-end"]
    return messages[ends[-1] + 1 :] if ends else []

"""One table, three ds-sync processes: one mirrors it, two stand by; the active one is
SIGKILLed again and again while 4 writers change the table.

Each kill hands the table to a standby (the advisory lock passes with the
dead process's connection); the killed process comes back as a standby. At
the end, pg-items holds every change once, and materialised it is the table.
"""

from __future__ import annotations

import asyncio
import random
import time
from functools import partial
from typing import TYPE_CHECKING

import httpx
from sync_support import group, passed, rows, wait_until
from test_mirror_kill import (
    KILLS,
    OPS_PER_WRITER,
    WRITERS,
    delivered,
    first_sync,
    prepare,
    write_and_kill,
)

if TYPE_CHECKING:
    import pytest
    from sync_support import SyncProcess

PROCESSES = 3
ACTIVE = 'ds_sync_table_active{table="items"}'


def active(processes: list[SyncProcess]) -> SyncProcess | None:
    """The process mirroring items now (its metric says so), if one does."""
    for process in processes:
        if process.process is None:
            continue
        try:
            if process.metric(ACTIVE) == 1:
                return process
        except (AssertionError, httpx.HTTPError):
            continue
    return None


async def kill_active(
    processes: list[SyncProcess], thresholds: list[int], progress: list[int]
) -> list[tuple[str, float]]:
    """SIGKILL the active process at each threshold and start it again (as a standby);
    how long each time until another one was active."""
    killed = []
    for threshold in thresholds:
        await passed(progress, threshold)
        victim = await asyncio.to_thread(wait_until, lambda: active(processes), 30, "an active")
        victim.kill()
        gone = time.monotonic()
        others = [p for p in processes if p is not victim]
        await asyncio.to_thread(wait_until, partial(active, others), 30, "a takeover")
        killed.append((victim.instance[-1], time.monotonic() - gone))
        await asyncio.to_thread(victim.start)
    return killed


def test_a_standby_takes_over_each_killed_active_and_nothing_is_lost_or_doubled(
    ds_server: str, postgres_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    prepare(ds_server, postgres_db)
    processes = group(ds_server, postgres_db, "none/*", PROCESSES, DS_SYNC__TABLES="items")
    try:
        for process in processes:
            process.start()
        first_sync(ds_server)
        first = wait_until(lambda: active(processes), timeout=30, what="an active process")
        standbys = [p for p in processes if p is not first]
        assert all(p.metric(ACTIVE) == 0 for p in standbys)
        roles = rows(
            postgres_db,
            "SELECT role, count(*) FROM sync_mirror_instances WHERE table_name = 'public.items' "
            "GROUP BY role ORDER BY role",
        )
        assert roles == [("active", 1), ("standby", PROCESSES - 1)]
        seed = random.randrange(1_000_000)
        started = time.monotonic()
        made, killed = asyncio.run(
            write_and_kill(postgres_db, seed, partial(kill_active, processes))
        )
        wrote_in = time.monotonic() - started
        found = delivered(ds_server, postgres_db, made)
        caught_up_in = time.monotonic() - started
        holder = rows(postgres_db, "SELECT active_instance FROM sync_mirrors")[0][0]
        for process in processes:
            assert process.stop() == 0
        takeovers = ", ".join(f"{name} {secs:.2f}s" for name, secs in killed)
        with capsys.disabled():
            print(
                f"\nmirror group kill test (seed {seed}): {PROCESSES} ds-sync processes, one "
                f"active and {PROCESSES - 1} standbys; {WRITERS} writers made "
                f"{WRITERS * OPS_PER_WRITER:,} random ops ({made:,} row changes) in "
                f"{wrote_in:.1f}s; the active one SIGKILLed {len(killed)} times and restarted as "
                f"a standby (killed, then another active after: {takeovers}); {found}; "
                f"caught up {caught_up_in:.1f}s after the first op; active at the end: {holder}"
            )
        assert len(killed) == KILLS
        found.check()
    finally:
        for process in processes:
            process.kill()


def test_a_killed_standby_leaves_the_queue_and_the_view_names_each_process(
    ds_server: str, postgres_db: str
) -> None:
    prepare(ds_server, postgres_db)
    processes = group(ds_server, postgres_db, "none/*", 2, DS_SYNC__TABLES="items")

    def queued() -> list[tuple[object, ...]]:
        return rows(
            postgres_db,
            "SELECT role, application_name FROM sync_mirror_instances ORDER BY role",
        )

    try:
        for process in processes:
            process.start()
        first = wait_until(lambda: active(processes), timeout=30, what="an active process")
        (standby,) = [p for p in processes if p is not first]
        wait_until(lambda: len(queued()) == 2, timeout=30, what="the standby queued")
        assert queued() == [
            ("active", f"ds-sync {first.instance} items"),
            ("standby", f"ds-sync {standby.instance} items"),
        ]
        # Killed while it waits for the lock: its backend notices within the client check.
        standby.kill()
        wait_until(lambda: len(queued()) == 1, timeout=15, what="the killed standby gone")
        assert queued() == [("active", f"ds-sync {first.instance} items")]
    finally:
        for process in processes:
            process.kill()

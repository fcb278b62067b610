"""The dev stack with two ds-sync processes (what ``make dev-cluster`` runs): they share the
session streams' shards, one mirrors items and the other stands by, and one that is killed
is started again while the other carries on. ``make dev`` keeps its single ``ds-sync``."""

from __future__ import annotations

import shutil
import signal
import time
from pathlib import Path

import httpx
import psycopg
from ds_stack.dev import banner
from ds_stack.dev.config import StackConfig, throwaway
from ds_stack.dev.stack import Stack

SHARDS = 8


def _rows(url: str, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(sql).fetchall()


def _until(check: object, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def _divided(config: StackConfig) -> bool:
    sql = "SELECT instance, cardinality(shards) FROM sync_instances ORDER BY instance"
    found = _rows(config.postgres_url, sql)
    return found == [("ds-sync-1", SHARDS // 2), ("ds-sync-2", SHARDS // 2)]


def _events(config: StackConfig) -> int:
    count = _rows(config.postgres_url, "SELECT count(*) FROM session_events")[0][0]
    assert isinstance(count, int)
    return count


def test_one_ds_sync_by_default_and_two_named_in_the_banner() -> None:
    single = StackConfig(state_dir=Path("/nonexistent"), sync_port=4438)
    assert single.sync_ports == [4438]
    assert "ds-sync    http://127.0.0.1:4438/metrics   both directions" in banner.urls(single, "t")
    assert not Stack(single).carries_on_without("ds-sync")
    pair = StackConfig(state_dir=Path("/nonexistent"), sync_port=4438, syncs=2)
    assert pair.sync_ports == [4438, 4448]
    assert pair.ports()["--sync-port (ds-sync 2)"] == 4448
    text = banner.urls(pair, "t")
    assert "http://127.0.0.1:4438/metrics  http://127.0.0.1:4448/metrics   2 processes" in text
    assert "http://127.0.0.1:4448/metrics" in banner.ready_line("ds-sync-2", 1.0, pair)


def test_two_ds_sync_processes_share_the_work_and_one_killed_comes_back() -> None:
    config = throwaway("ds-dev-syncs-", syncs=2, snapshot_secs=0)
    stack = Stack(config)
    try:
        stack.start()
        names = sorted(stack.processes())
        assert {"ds-sync-1", "ds-sync-2"} <= set(names)
        # Each on its own metrics port, both answering.
        for url in config.sync_urls:
            assert httpx.get(f"{url}/healthz", timeout=5).status_code == 200
        _until(lambda: _divided(config), "the shards divided between the two")
        roles = _rows(
            config.postgres_url,
            "SELECT role FROM sync_mirror_instances WHERE table_name = 'public.items' ORDER BY 1",
        )
        assert roles == [("active",), ("standby",)]
        # The heartbeat's session events reach session_events whichever process holds them.
        _until(lambda: _events(config) > 0, "the heartbeat's events in session_events")

        # SIGKILL one: the launcher sees it gone, the stack carries on, it starts again.
        stack.processes()["ds-sync-2"].send_signal(signal.SIGKILL)
        _until(lambda: stack.exited() is not None, "ds-sync-2 seen gone")
        gone = stack.exited()
        assert gone is not None
        assert gone[0] == "ds-sync-2"
        assert stack.carries_on_without("ds-sync-2")
        before = _events(config)
        _until(lambda: _events(config) > before, "events synced while ds-sync-2 is down")
        stack.restart("ds-sync-2")
        assert stack.exited() is None
        _until(lambda: _divided(config), "the shards divided again after the restart")
    finally:
        stack.stop()
        shutil.rmtree(config.state, ignore_errors=True)

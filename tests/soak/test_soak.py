"""Months in minutes: the whole stack under steady load with its limits lowered.

The stack is ``ds_stack.dev.Stack`` (what ``make dev`` runs), with a stream
limit of 1 MiB retained, ds-sync compacting pg-items every 128 KiB, wake
streams kept to 8 KiB, a heartbeat five times a second and the snapshot
job every 20 s. Against it, for ``DS_SOAK_SECS`` (90 in ``make test``, an
hour in ``make soak``): session writers on ``session-events`` and two
``sessions/*`` streams, a churn of inserts, updates and deletes over a
small ``items`` table, ds-sync SIGKILLed three times, a reader following
pg-items from its start, a late reader bootstrapping it every 15 s, and
the official ``@durable-streams/state`` reader joining a quarter in.

It must end with no append refused, every session event in
``session_events`` exactly once, pg-items materialised to exactly the
table by every reader, bootstraps bounded by the table and the policy,
not by the history, and the store's disk use bounded. The last line it
prints is the figures: bytes written and retained per stream, bootstrap
size against table size, the late reader's catch-up time, disk use.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from typing import TYPE_CHECKING

import httpx
import psycopg
import pytest
from ds_stack.dev import Stack, throwaway
from mirror_support import (
    Follower,
    NodeReader,
    changes,
    duplicates,
    items_rows,
    materialise,
    normalised_items,
)
from prometheus_client.parser import text_string_to_metric_families
from soak_load import Churn, LateReads, SessionWriter, late_read

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

SOAK_SECS = float(os.environ.get("DS_SOAK_SECS", "90"))
KiB, MiB = 1024, 1024 * 1024
LIMIT = 1 * MiB
COMPACT = 128 * KiB
WAKE_RETAINED = 8 * KiB
SESSIONS = ("session-events", "sessions/soak-a", "sessions/soak-b")
KILLS = 3
LATE_READ_SECS = 15.0
MARKER = "soak end"

pytestmark = pytest.mark.timeout(SOAK_SECS + 900)


@pytest.fixture
def stack(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stack]:
    # The heartbeat inherits this: it keeps 20 rows and message keys.
    monkeypatch.setenv("DS_HEARTBEAT__KEEP", "20")
    config = throwaway(
        "ds-soak-",
        heartbeat_secs=0.2,
        snapshot_secs=20,
        server_env={
            "DS_LIMITS__MAX_RETAINED_BYTES": str(LIMIT),
            "DS_SUBSCRIPTIONS__WAKE_STREAM_RETAINED_BYTES": str(WAKE_RETAINED),
            "DS_SERVER__LONG_POLL_TIMEOUT_SECS": "5",
        },
        sync_env={
            "DS_SYNC__COMPACT_AFTER_BYTES": str(COMPACT),
            "DS_SYNC__WAKE_INTERVAL_SECS": "0.05",
        },
    )
    stack = Stack(config)
    stack.start()
    try:
        yield stack
    finally:
        stack.stop()


def eventually(check: Callable[[], bool], what: str, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.5)


def test_soak(stack: Stack) -> None:
    started = time.monotonic()
    config = stack.config
    base, token, pg = config.gateway_url, stack.tokens["user"], config.postgres_url
    auth = {"Authorization": f"Bearer {token}"}
    eventually(
        lambda: httpx.head(f"{base}/v1/stream/pg-items", headers=auth).is_success, "pg-items"
    )

    writers = [
        SessionWriter(base, token, stream, rate=2.0 if stream == "session-events" else 1.0,
                      event_bytes=2 * KiB)
        for stream in SESSIONS
    ]  # fmt: skip
    churn = Churn(pg, rate=10.0, rows=120, body_bytes=1024)
    follower = Follower(base, "pg-items", token)
    for thread in (*writers, churn, follower):
        thread.start()

    late = LateReads()
    node: NodeReader | None = None
    kills = 0
    max_disk = 0
    load_started = time.monotonic()
    next_late = load_started + LATE_READ_SECS

    # The load runs for SOAK_SECS, and on a slow machine on until the long-lived streams
    # have written several times their limits (what the test is about), at most 4x as long.
    def passed_their_limits() -> bool:
        return (
            written_and_retained(base, auth, "pg-items")[0] > 3 * LIMIT
            and written_and_retained(base, auth, "ds-sync/ds-sync-wakes")[0] > 3 * WAKE_RETAINED
        )

    next_volume_check = load_started + SOAK_SECS
    while (elapsed := time.monotonic() - load_started) < 4 * SOAK_SECS:
        if elapsed >= SOAK_SECS and time.monotonic() >= next_volume_check:
            if passed_their_limits():
                break
            next_volume_check = time.monotonic() + 2.0
        if node is None and elapsed >= SOAK_SECS / 4:
            node = NodeReader(f"{base}/v1/stream/pg-items", f"title={MARKER}", token)
        if kills < KILLS and elapsed >= SOAK_SECS * (kills + 1) / (KILLS + 1):
            assert stack.sync is not None
            stack.sync.kill()
            stack.restart("ds-sync")
            kills += 1
        if time.monotonic() >= next_late:
            state, size, seconds = late_read(base, token, "pg-items")
            late.bootstrap_bytes.append(size)
            late.table_bytes.append(len(json.dumps(state)))
            late.seconds.append(seconds)
            max_disk = max(max_disk, directory_bytes(config.streams_dir))
            next_late += LATE_READ_SECS
        gone = stack.exited()
        assert gone is None, f"{gone[0]} exited: {gone[1]}"
        time.sleep(0.2)
    load_secs = time.monotonic() - load_started

    for thread in (*writers, churn):
        thread.stop()
    refused = [f"{w.stream}: {r}" for w in writers for r in w.refused]
    assert refused == [], refused

    # Every session event in session_events, exactly once (ds-sync was killed meanwhile).
    def synced() -> bool:
        return all(events(pg, w.stream) == (w.written, w.written) for w in writers)

    eventually(synced, "ds-sync to have every session event")

    # pg-items as the table: the official reader, the follower, a reader joining now.
    # The heartbeat stops first, so the table holds still; the marker row is its last change.
    stop_heartbeat(stack)
    with psycopg.connect(pg, autocommit=True) as conn:
        conn.execute("INSERT INTO items (title) VALUES (%s)", (MARKER,))
    assert node is not None
    official = node.result()
    expected = items_rows(pg)
    eventually(
        lambda: normalised_items(late_read(base, token, "pg-items")[0]) == expected, "a late reader"
    )
    eventually(
        lambda: normalised_items(materialise(follower.messages, "items")) == expected,
        "the follower",
        timeout=60,
    )
    follower.stop()
    assert normalised_items(official["rows"]) == expected
    assert follower.gone == 0, "the follower was sent back by a 410"
    doubled = duplicates(follower.messages)
    assert doubled == 0

    # No append anywhere was refused: not ours, not the heartbeat's, not ds-sync's.
    metrics = scrape(config.server_metrics_url)
    assert (
        sum(
            v
            for labels, v in metrics.get("ds_server_requests", [])
            if labels.get("status") == "413"
        )
        == 0
    )
    assert " 413 " not in (config.logs_dir / "heartbeat.log").read_text(errors="replace")
    assert "HTTP 413" not in (config.logs_dir / "ds-sync.log").read_text(errors="replace")

    # What each long-lived stream wrote, and what it keeps.
    figures = {name: written_and_retained(base, auth, name) for name in (*SESSIONS, "pg-items")}
    figures["wake stream"] = written_and_retained(base, auth, "ds-sync/ds-sync-wakes")
    for name, (_, retained) in figures.items():
        assert retained <= LIMIT, (name, retained)
    pg_written, _ = figures["pg-items"]
    assert pg_written > 3 * LIMIT, "pg-items should have passed its limit several times"
    assert figures["wake stream"][0] > 3 * WAKE_RETAINED

    # Bootstraps are the table and the recent changes, not the history.
    table_json = late.table_bytes[-1] if late.table_bytes else 0
    for size, table in zip(late.bootstrap_bytes, late.table_bytes, strict=True):
        assert size <= 2 * table + COMPACT + 256 * KiB, (size, table)
    assert max(late.bootstrap_bytes) < pg_written / 3

    # The snapshot job ran on its schedule and moved every session stream's retention
    # (its first run starts 20 s in and takes a JVM's start: on a busy machine, minutes).
    def snapshotted() -> bool:
        return all(
            httpx.head(f"{base}/v1/stream/{stream}", headers=auth).headers.get(
                "Stream-Snapshot-Offset"
            )
            for stream in SESSIONS
        )

    eventually(snapshotted, "the snapshot job to snapshot the session streams", timeout=300)
    snapshot_log = (config.logs_dir / "snapshots.log").read_text(errors="replace")
    # Runs that published (a run's verify step may still be going on).
    snapshot_runs = snapshot_log.count("streams: published")
    figures.update({name: written_and_retained(base, auth, name) for name in SESSIONS})

    # The store on disk (sqlite: its database and WAL) stays bounded, not growing with
    # what the streams wrote.
    disk = directory_bytes(config.streams_dir)
    max_disk = max(max_disk, disk)
    written_total = sum(written for written, _ in figures.values())
    assert max_disk < 16 * MiB + written_total / 4, (max_disk, written_total)

    summary = (
        f"soak summary: {load_secs:.0f} s of load ({time.monotonic() - started:.0f} s in all), "
        f"ds-sync killed {kills}x, {len(refused)} appends refused, "
        f"{sum(w.written for w in writers)} session events in session_events once each, "
        f"{churn.changed} items changes ({len(changes(follower.messages))} on the follower, "
        f"{doubled} twice) | "
        "written/retained: "
        + ", ".join(f"{name} {kib(w)}/{kib(r)} KiB" for name, (w, r) in figures.items())
        + f" | pg-items bootstrap {kib(max(late.bootstrap_bytes))} KiB max vs table "
        f"{kib(table_json)} KiB (history {kib(pg_written)} KiB) | late reader catch-up "
        f"p50 {statistics.median(late.seconds):.3f} s, max {max(late.seconds):.3f} s "
        f"({len(late.seconds)} reads) | official reader: {official['bootstraps']} bootstrap(s) "
        f"| snapshot job runs that published: {snapshot_runs} | store on disk {disk / MiB:.1f} MiB "
        f"(at most {max_disk / MiB:.1f} MiB while loaded)"
    )
    print("\n" + summary)


def events(postgres_url: str, stream: str) -> tuple[int, int]:
    """The soak's events of ``stream`` in session_events: rows, and distinct events."""
    with psycopg.connect(postgres_url) as conn:
        row = conn.execute(
            "SELECT count(*), count(DISTINCT payload->'value'->>'n') FROM session_events "
            "WHERE stream_name = %s AND payload->'value'->>'author' = 'soak'",
            (stream,),
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def stop_heartbeat(stack: Stack) -> None:
    """Stop the heartbeat, so the table holds still for the final comparisons."""
    if stack.heartbeat is not None:
        stack.heartbeat.stop()
        stack.heartbeat = None


def scrape(url: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    families: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(httpx.get(url, timeout=10).text):
        families[family.name] = [(s.labels, s.value) for s in family.samples]
    return families


def written_and_retained(base: str, auth: dict[str, str], stream: str) -> tuple[int, int]:
    """A stream's tail (everything it ever wrote) and its bytes past its latest snapshot."""
    head = httpx.head(f"{base}/v1/stream/{stream}", headers=auth)
    assert head.status_code == 200, (stream, head.status_code)
    tail = int(head.headers["Stream-Next-Offset"])
    snapshot = head.headers.get("Stream-Snapshot-Offset")
    return tail, tail - (int(snapshot) if snapshot else 0)


def directory_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def kib(size: int) -> str:
    return f"{size / KiB:.1f}"

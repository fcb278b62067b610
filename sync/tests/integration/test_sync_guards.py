"""The guards: the unique key stops a stream loudly, `ds-sync migrate` applies once, bad settings
exit 2 (the migration runner's own guards are tested beside it, in schema/tests)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from typing import TYPE_CHECKING

import psycopg
from ds_schema.migrate import migrate
from sync_support import checkpoint, count_events, rows, wait_until

if TYPE_CHECKING:
    from sync_support import Streams, SyncProcess


def test_rows_already_at_a_batch_position_stop_the_stream_with_an_error(
    sync: SyncProcess, streams: Streams, postgres_db: str
) -> None:
    path = streams.create("clash")
    streams.append("clash", {"type": "t", "key": "k1"}, {"type": "t", "key": "k2"})
    with psycopg.connect(postgres_db) as conn:
        migrate(conn)
        # A row where ds-sync's first batch will go, put there behind its back.
        conn.execute(
            "INSERT INTO session_events (stream_name, ds_offset, event_index, payload) "
            "VALUES (%s, %s, 1, '\"intruder\"')",
            (path, "0" * 20),
        )
    sync.start()
    wait_until(lambda: (checkpoint(postgres_db, path) or ("", ""))[1] == "failed", what="failed")
    assert count_events(postgres_db, path) == 1  # nothing skipped, nothing half-applied
    assert checkpoint(postgres_db, path) == ("0" * 20, "failed")
    assert "exist already" in sync.log()
    assert "nothing was skipped" in sync.log()
    assert sync.metric("ds_sync_conflicts_total") == 1


def test_migrate_is_idempotent_from_the_command_line(postgres_db: str) -> None:
    env = {**os.environ, "POSTGRES_URL": postgres_db}
    command = [sys.executable, "-m", "ds_sync", "migrate"]
    first = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    assert first.returncode == 0, first.stderr
    assert "applied 0001_session_events" in first.stdout
    again = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    assert again.returncode == 0
    assert again.stdout.strip() == "the schema is up to date"
    tables = {row[0] for row in rows(postgres_db, "SELECT tablename FROM pg_tables")}
    assert {"session_events", "items", "sync_checkpoints", "sync_gaps"} <= tables


def test_a_taken_metrics_port_is_one_clear_line(postgres_db: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {**os.environ, "POSTGRES_URL": postgres_db, "DS_SYNC__METRICS_PORT": str(port)}
        result = subprocess.run(
            [sys.executable, "-m", "ds_sync"], env=env, capture_output=True, text=True, check=False
        )
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"ds-sync: cannot listen on 127.0.0.1:{port} for /metrics and /healthz")


def test_a_bad_setting_is_one_line_and_exit_status_2() -> None:
    env = {**os.environ, "DS_SYNC__STREAMS": "rooms/room-*"}
    result = subprocess.run(
        [sys.executable, "-m", "ds_sync"], env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "ds-sync: error: DS_SYNC__STREAMS='rooms/room-*': Value error, "
        "'rooms/room-*': '*' and '**' must be whole segments"
    )

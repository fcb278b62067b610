"""The guards: the unique key stops a stream loudly, migrations apply once, bad settings exit 2."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from typing import TYPE_CHECKING

import psycopg
import pytest
from ds_sync.migrate import Migration, MigrationError, discover, migrate
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


def test_concurrent_migrations_apply_each_file_once(postgres_db: str) -> None:
    results: list[list[Migration]] = []

    def run() -> None:
        with psycopg.connect(postgres_db, autocommit=True) as conn:
            results.append(migrate(conn))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(len(applied) for applied in results) == [0, 0, 0, len(discover())]


def test_a_migration_edited_after_it_was_applied_is_refused(postgres_db: str) -> None:
    with psycopg.connect(postgres_db, autocommit=True) as conn:
        migrate(conn)
        edited = [Migration(m.version, m.name, m.sql + "\n-- edited") for m in discover()]
        with pytest.raises(MigrationError, match="changed after it was applied"):
            migrate(conn, edited)
        extra = [*discover(), Migration(99, "later", "CREATE TABLE later (id int);")]
        assert [m.version for m in migrate(conn, extra)] == [99]
        with pytest.raises(MigrationError, match="which this ds-sync doesn't know"):
            migrate(conn)


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

"""The runner against a real Postgres: each file once under concurrent starts, edits refused."""

from __future__ import annotations

import threading

import psycopg
import pytest
from ds_schema.migrate import Migration, MigrationError, discover, migrate


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
        # Whoever applies them is named: ds-spark creates the same tables.
        with pytest.raises(MigrationError, match="which this ds-spark doesn't know"):
            migrate(conn, program="ds-spark")


def test_a_failing_migration_leaves_nothing_behind(postgres_db: str) -> None:
    broken = [*discover(), Migration(99, "broken", "CREATE TABLE half (id int); SELECT 1/0;")]
    with psycopg.connect(postgres_db, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.DivisionByZero):
            migrate(conn, broken)
        tables = {row[0] for row in conn.execute("SELECT tablename FROM pg_tables").fetchall()}
        assert "half" not in tables
        assert "session_events" not in tables  # the files before it went with it: one transaction
        assert len(migrate(conn)) == len(discover())

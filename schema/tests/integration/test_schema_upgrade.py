"""A database ds-sync migrated before the schema had a package of its own is up to date.

Until ds-schema, ds-sync's ``ds_sync.migrate`` applied the same SQL files and
kept the same record. What it left behind is written down here as it wrote
it (its table's definition, its rows and its advisory lock key, read from a
database it migrated); the package must take that database as it is: no
file applied again, no error, the rows untouched.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

import psycopg
from ds_schema.migrate import LOCK_KEY, TABLE, Migration, discover, migrate

# ds-sync 0.1.0's record of the schema (sync/src/ds_sync/migrate.py, migrations 0001-0007).
DS_SYNC_TABLE = "ds_sync_migrations"
DS_SYNC_TABLE_DDL = (
    "CREATE TABLE ds_sync_migrations (version integer PRIMARY KEY, "
    "name text NOT NULL, checksum text NOT NULL, "
    "applied_at timestamptz NOT NULL DEFAULT now())"
)
DS_SYNC_ROWS = [
    (1, "session_events", "7ca3cb743f0e9db52e709cbfdc359fb665347b4c304383915d2df372582840fc"),
    (2, "items", "ec2c47ba8976124f846a8f8519bae231debc3f0219fa2ce9df0f0b5f5dddcad1"),
    (3, "sync_state", "11ccb31c4e916b439304066d336ace25213cb2579a3cd595ac177423841c956b"),
    (4, "spark_analytics", "bdb198de08a5844740061c0b116186a754d1ab94b51fa4cac2154f5b9a22db94"),
    (5, "table_mirrors", "4dc62d03938fa383315ac333a26770ee2553285ca4b513d92e3983328896f88c"),
    (6, "mirror_snapshots", "683915063c4937d0fcd2c709fe644040a83a018cc59c6810442cc7dbb9809be9"),
    (7, "sharing", "014e6226968542d372da017de2ba2dba20590a9a97acb982d69746969ae9e914"),
]
# pg_advisory_xact_lock's key: an older ds-sync and a newer ds-spark must take the same lock.
DS_SYNC_LOCK_KEY = 2443038875266386479
APPLIED_AT = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)


def _migrated_by_ds_sync(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    """The database as ds-sync left it: the schema's files applied, its record beside them."""
    shipped = {m.version: m for m in discover()}
    with conn.transaction():
        conn.execute(DS_SYNC_TABLE_DDL)
        for version, name, checksum in DS_SYNC_ROWS:
            conn.execute(shipped[version].sql.encode())
            conn.execute(
                "INSERT INTO ds_sync_migrations (version, name, checksum, applied_at) "
                "VALUES (%s, %s, %s, %s)",
                (version, name, checksum, APPLIED_AT),
            )


def _record(conn: psycopg.Connection[tuple[object, ...]]) -> list[tuple[object, ...]]:
    return conn.execute(
        "SELECT version, name, checksum, applied_at FROM ds_sync_migrations ORDER BY version"
    ).fetchall()


def test_the_record_keeps_ds_syncs_names() -> None:
    assert TABLE == DS_SYNC_TABLE
    assert LOCK_KEY == DS_SYNC_LOCK_KEY


def test_the_shipped_files_are_the_ones_ds_sync_applied() -> None:
    shipped = [(m.version, m.name, m.checksum) for m in discover()]
    assert shipped[: len(DS_SYNC_ROWS)] == DS_SYNC_ROWS


def test_a_database_ds_sync_migrated_is_taken_as_it_is(postgres_db: str) -> None:
    with psycopg.connect(postgres_db, autocommit=True) as conn:
        _migrated_by_ds_sync(conn)
        before = _record(conn)
        newer = [m for m in discover() if m.version > len(DS_SYNC_ROWS)]
        assert migrate(conn) == newer  # none while the schema has no file after 0007
        assert migrate(conn, program="ds-spark") == []
        after = _record(conn)
    assert after[: len(before)] == before  # applied_at too: nothing was applied again
    assert [row[0] for row in after] == [m.version for m in discover()]


def test_a_new_runner_waits_for_an_older_ds_sync_migrating(postgres_db: str) -> None:
    results: list[list[Migration]] = []
    with psycopg.connect(postgres_db, autocommit=True) as older:
        with older.transaction():
            # What ds-sync 0.1.0 holds while it applies the files.
            older.execute("SELECT pg_advisory_xact_lock(%s)", (DS_SYNC_LOCK_KEY,))
            runner = threading.Thread(target=_migrate_into, args=(postgres_db, results))
            runner.start()
            _until_waiting_on_an_advisory_lock(older)
            assert results == []
        runner.join()
    assert [len(applied) for applied in results] == [len(discover())]


def _migrate_into(url: str, results: list[list[Migration]]) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        results.append(migrate(conn))


def _until_waiting_on_an_advisory_lock(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    query = (
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
        "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    )
    deadline = time.monotonic() + 60.0
    while conn.execute(query).fetchone() != (1,):
        assert time.monotonic() < deadline, "the runner never waited for the lock"
        time.sleep(0.05)

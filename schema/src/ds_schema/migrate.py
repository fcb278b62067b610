"""Schema migrations: the SQL files of ``ds_schema.migrations``, applied once each, in order.

A small runner instead of a library (docs/sync.md says why): all pending
files are applied in ONE transaction that first takes an advisory lock, so
concurrent starts apply them once, and a process killed half-way leaves
nothing behind (Postgres rolls the transaction back and drops the lock with
the connection). Applied files are recorded with a checksum; editing one
after it shipped is an error, not a silent divergence.

The record keeps the names it had when ds-sync alone applied the schema (the
table ``ds_sync_migrations``, the lock key from ``ds-sync migrations``): a
database migrated then is up to date now, and an older ds-sync starting
beside a newer ds-spark still takes the same lock. Never rename them.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

from ds_schema.postgres_version import unsupported

if TYPE_CHECKING:
    import psycopg

_PACKAGE = "ds_schema.migrations"
_FILE_RE = re.compile(r"(\d{4})_([a-z0-9_]+)\.sql")
# pg_advisory_xact_lock key: "ds-sync migrations" as a stable 63-bit number.
LOCK_KEY = int.from_bytes(hashlib.sha256(b"ds-sync migrations").digest()[:8], "big") >> 1
TABLE = "ds_sync_migrations"


class MigrationError(RuntimeError):
    """The migration files or the database's record of them are inconsistent."""


@dataclass(frozen=True, slots=True)
class Migration:
    """One SQL file."""

    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def discover() -> list[Migration]:
    """Every migration file shipped in the package, by version."""
    found: dict[int, Migration] = {}
    for entry in resources.files(_PACKAGE).iterdir():
        match = _FILE_RE.fullmatch(entry.name)
        if match is None:
            continue
        version = int(match.group(1))
        if version in found:
            raise MigrationError(f"two migrations numbered {version:04d}")
        found[version] = Migration(version, match.group(2), entry.read_text(encoding="utf-8"))
    return [found[version] for version in sorted(found)]


def migrate(
    conn: psycopg.Connection[Any],
    migrations: list[Migration] | None = None,
    *,
    program: str = "ds-sync",
) -> list[Migration]:
    """Apply the pending migrations; returns those applied now (none when up to date).

    ``program`` is who applies them, as its errors name it.
    """
    problem = unsupported(conn.info.server_version, program)
    if problem is not None:
        raise MigrationError(problem)
    migrations = discover() if migrations is None else migrations
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {TABLE} (version integer PRIMARY KEY, "
            "name text NOT NULL, checksum text NOT NULL, "
            "applied_at timestamptz NOT NULL DEFAULT now())"
        )
        rows = conn.execute(f"SELECT version, name, checksum FROM {TABLE}").fetchall()
        applied = {int(row[0]): (str(row[1]), str(row[2])) for row in rows}
        _check_applied(applied, migrations, program)
        pending = [m for m in migrations if m.version not in applied]
        for migration in pending:
            conn.execute(migration.sql.encode())
            conn.execute(
                f"INSERT INTO {TABLE} (version, name, checksum) VALUES (%s, %s, %s)",
                (migration.version, migration.name, migration.checksum),
            )
    return pending


def _check_applied(
    applied: dict[int, tuple[str, str]], migrations: list[Migration], program: str
) -> None:
    known = {m.version: m for m in migrations}
    for version, (name, checksum) in sorted(applied.items()):
        migration = known.get(version)
        if migration is None:
            raise MigrationError(
                f"the database has migration {version:04d}_{name}, which this {program} "
                "doesn't know: it is older than the schema"
            )
        if migration.checksum != checksum:
            raise MigrationError(f"{version:04d}_{name}.sql changed after it was applied")
    newest = max(applied, default=0)
    late = [m for m in migrations if m.version < newest and m.version not in applied]
    if late:
        raise MigrationError(
            f"{late[0].version:04d}_{late[0].name}.sql is older than applied migration "
            f"{newest:04d}: number new migrations after the newest"
        )

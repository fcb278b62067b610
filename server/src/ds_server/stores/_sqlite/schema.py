"""The database layout of the sqlite backend, and how its connections are opened.

Tables (``PRAGMA user_version`` 2):

- ``streams``: one row per stream incarnation with everything a
  ``StreamState`` holds except producers, Stream-Seq values and the
  snapshot (``earliest_offset`` included: it moves with the snapshot). ``sid`` is
  a surrogate integer key (AUTOINCREMENT, so a purged stream's key is never
  reused while a read may still hold it); it keeps the other tables' keys short.
- ``producers`` / ``writer_seqs``: idempotent-producer and Stream-Seq state,
  ``WITHOUT ROWID`` tables keyed by ``(sid, name)``.
- ``chunks``: the bytes, one row per JSON message or byte append, cut into
  pieces of at most ``PIECE_BYTES`` (``cont`` = 1 on the pieces after the
  first) so a paged read never loads a whole multi-megabyte append. Locating
  an offset is one descent of the unique ``(sid, start)`` index. This is a
  rowid table plus that index rather than a ``WITHOUT ROWID`` table: in the
  latter, rows that carry blobs land in interior b-tree pages too, and we
  measured boundary lookups 5-40x slower and inserts about 2x slower.
- ``snapshots``: at most one per stream (keyed by ``sid``), its blob and
  what ``SnapshotInfo`` says about it. A rowid table for the same reason.
- ``buckets``: the /ds buckets.

Only ``streams``, ``producers``, ``writer_seqs``, ``buckets`` and the
snapshots' small columns are read at start-up, so start-up time does not
grow with the amount of data.

The database is created with ``auto_vacuum=INCREMENTAL`` (it must be set
before the first table exists): pages freed by a purge, or by dropping the
chunks a snapshot made unreachable, go to the freelist and
the writer hands them back to the file system between write batches with
``PRAGMA incremental_vacuum``.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

SCHEMA_VERSION = 2
PIECE_BYTES = 64 * 1024
# SQLite's default page size; max_page_count is expressed in pages.
PAGE_BYTES = 4096
# The WAL is truncated back to this size after a checkpoint resets it.
_JOURNAL_SIZE_LIMIT = 64 * 1024 * 1024
_BUSY_TIMEOUT_MS = 10_000

_TABLES = (
    """
    CREATE TABLE streams (
        sid INTEGER PRIMARY KEY AUTOINCREMENT,
        stream_id TEXT NOT NULL UNIQUE,
        path TEXT NOT NULL,
        content_type TEXT NOT NULL,
        created_at REAL NOT NULL,
        ttl_seconds INTEGER,
        expires_at REAL,
        last_access REAL NOT NULL,
        tail INTEGER NOT NULL,
        fork_offset INTEGER NOT NULL,
        forked_from TEXT,
        forked_from_id TEXT,
        fork_requested_offset INTEGER,
        fork_sub_offset INTEGER NOT NULL,
        closed INTEGER NOT NULL,
        closed_by_producer TEXT,
        closed_by_epoch INTEGER,
        closed_by_seq INTEGER,
        soft_deleted INTEGER NOT NULL,
        earliest_offset INTEGER NOT NULL,
        last_write REAL NOT NULL
    )
    """,
    """
    CREATE TABLE producers (
        sid INTEGER NOT NULL,
        producer_id TEXT NOT NULL,
        epoch INTEGER NOT NULL,
        last_seq INTEGER NOT NULL,
        PRIMARY KEY (sid, producer_id)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE writer_seqs (
        sid INTEGER NOT NULL,
        writer TEXT NOT NULL,
        seq TEXT NOT NULL,
        PRIMARY KEY (sid, writer)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE chunks (
        id INTEGER PRIMARY KEY,
        sid INTEGER NOT NULL,
        start INTEGER NOT NULL,
        cont INTEGER NOT NULL,
        data BLOB NOT NULL
    )
    """,
    "CREATE UNIQUE INDEX chunks_at ON chunks (sid, start)",
    """
    CREATE TABLE snapshots (
        sid INTEGER PRIMARY KEY,
        stream_offset INTEGER NOT NULL,
        content_type TEXT NOT NULL,
        size INTEGER NOT NULL,
        created_at REAL NOT NULL,
        data BLOB NOT NULL
    )
    """,
    """
    CREATE TABLE buckets (
        bucket_id TEXT PRIMARY KEY,
        created_at REAL NOT NULL
    ) WITHOUT ROWID
    """,
)


class SchemaError(RuntimeError):
    """The database was written by an incompatible version of this backend."""


def connect(path: Path, *, readonly: bool = False) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), usable from any thread."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
    if readonly:
        conn.execute("PRAGMA query_only = ON")
    else:
        # FULL: a COMMIT returns only once the WAL is on disk (acknowledged = durable).
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute(f"PRAGMA journal_size_limit = {_JOURNAL_SIZE_LIMIT}")
        # Some builds zero every freed page (SECURE_DELETE), which writes all
        # of a deleted stream through the WAL once more. The vacuum that
        # follows truncates or overwrites freed pages anyway.
        conn.execute("PRAGMA secure_delete = FAST")
    return conn


def ensure_schema(conn: sqlite3.Connection) -> None:
    """Create the tables in a new database; check the version of an existing one."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version == SCHEMA_VERSION:
        conn.execute("PRAGMA journal_mode = WAL")
        return
    if version != 0:
        raise SchemaError(f"database schema version {version}, expected {SCHEMA_VERSION}")
    # Both are persistent properties of the file; auto_vacuum must come first.
    conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in _TABLES:
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise

"""The tables of the SQLite subscription store (``PRAGMA user_version`` 1).

- ``subscriptions(id, spec, root_url, created_at, generation)``: ``spec`` is
  the configuration as JSON (``codec``), ``generation`` the last one handed out.
- ``subscription_links(subscription_id, path, explicit, glob, acked)``.
- ``subscription_secrets(name, value)``: the callback-token key and the
  webhook signing key.
"""

from __future__ import annotations

import os
import sqlite3
from typing import TYPE_CHECKING

from ds_server.subscriptions.storage.base import SubscriptionStorageError

if TYPE_CHECKING:
    from pathlib import Path

VERSION = 1
_BUSY_TIMEOUT_MS = 5_000

_TABLES = """
CREATE TABLE IF NOT EXISTS subscriptions (
    id TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    root_url TEXT NOT NULL,
    created_at REAL NOT NULL,
    generation INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS subscription_links (
    subscription_id TEXT NOT NULL REFERENCES subscriptions(id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    explicit INTEGER NOT NULL,
    glob INTEGER NOT NULL,
    acked INTEGER NOT NULL,
    PRIMARY KEY (subscription_id, path)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS subscription_secrets (
    name TEXT PRIMARY KEY,
    value BLOB NOT NULL
);
"""


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating if needed) the database at ``path``, ready for durable writes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # The file holds the signing key: readable by the server's user only.
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    os.close(fd)
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA journal_mode = WAL")
    # An ack is answered only after its commit is on disk.
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA foreign_keys = ON")
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > VERSION:
        conn.close()
        raise SubscriptionStorageError(
            f"{path}: subscription schema version {version} is newer than this server's {VERSION}"
        )
    conn.executescript(f"BEGIN; {_TABLES} PRAGMA user_version = {VERSION}; COMMIT;")
    return conn

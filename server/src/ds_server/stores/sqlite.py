"""The SQLite backend: ACID and crash-safe, in one database file under the data directory.

Every acknowledged write is committed with ``synchronous=FULL`` in WAL mode;
concurrent appends share a transaction and its fsync (group commit). See
``stores/_sqlite`` for the schema, the writer thread and space reclaim.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ds_server.stores._sqlite import SqlitePersistence

if TYPE_CHECKING:
    from ds_server.settings import Settings

DB_FILE = "sqlite/streams.db"


def from_settings(settings: Settings) -> SqlitePersistence:
    """The ``sqlite`` backend: ``{data_dir}/sqlite/streams.db``; survives restarts and kill -9."""
    storage = settings.storage
    return SqlitePersistence(storage.data_dir / DB_FILE, max_db_bytes=storage.sqlite_max_db_bytes)

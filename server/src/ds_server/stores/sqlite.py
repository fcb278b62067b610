"""The SQLite backend: ACID and crash-safe, in one database file under the data directory.

Every acknowledged write is committed with ``synchronous=FULL`` in WAL mode;
concurrent appends share a transaction and its fsync (group commit). See
``stores/_sqlite`` for the schema, the writer thread and space reclaim.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ds_server.stores._log_store import DEFAULT_MAX_SNAPSHOT_BYTES, LogStore
from ds_server.stores._quotas import NO_QUOTAS, quota_policy
from ds_server.stores._sqlite import SqlitePersistence

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Self

    from ds_server.live import LiveNotifier
    from ds_server.settings import Settings
    from ds_server.stores._quotas import QuotaPolicy

DB_FILE = "sqlite/streams.db"


class SqliteStore(LogStore):
    """Streams in ``{data_dir}/sqlite/streams.db``; survive restarts and kill -9."""

    def __init__(
        self,
        live: LiveNotifier,
        path: Path,
        *,
        max_retained_bytes: int,
        max_snapshot_bytes: int = DEFAULT_MAX_SNAPSHOT_BYTES,
        quotas: QuotaPolicy = NO_QUOTAS,
        max_db_bytes: int = 0,
    ) -> None:
        self.persistence = SqlitePersistence(path, max_db_bytes=max_db_bytes)
        super().__init__(
            live,
            self.persistence,
            max_retained_bytes=max_retained_bytes,
            max_snapshot_bytes=max_snapshot_bytes,
            quotas=quotas,
        )

    @classmethod
    def from_settings(cls, settings: Settings, live: LiveNotifier) -> Self:
        return cls(
            live,
            settings.storage.data_dir / DB_FILE,
            max_retained_bytes=settings.limits.max_retained_bytes,
            max_snapshot_bytes=settings.limits.max_snapshot_bytes,
            quotas=quota_policy(settings),
            max_db_bytes=settings.storage.sqlite_max_db_bytes,
        )

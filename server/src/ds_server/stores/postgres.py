"""The Postgres backend: streams in a database that several ds-server processes can share.

Every acknowledged write is committed (``synchronous_commit=on``);
concurrent appends share a transaction (group commit), and every write is
fenced on the stream's state version, so a process never stores a write
decided on a state another process has changed. Tables live in a schema of
their own (``DS_STORAGE__POSTGRES_SCHEMA``). See ``stores/_postgres``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ds_server.stores._log_store import DEFAULT_MAX_SNAPSHOT_BYTES, LogStore
from ds_server.stores._postgres import PostgresPersistence
from ds_server.stores._quotas import NO_QUOTAS, quota_policy

if TYPE_CHECKING:
    from typing import Self

    from ds_server.live import LiveNotifier
    from ds_server.settings import Settings
    from ds_server.stores._quotas import QuotaPolicy


class PostgresStore(LogStore):
    """Streams in the Postgres database at ``DS_STORAGE__POSTGRES_URL``."""

    def __init__(
        self,
        live: LiveNotifier,
        url: str,
        *,
        max_retained_bytes: int,
        max_snapshot_bytes: int = DEFAULT_MAX_SNAPSHOT_BYTES,
        schema: str = "ds_server",
        pool_size: int = 8,
        quotas: QuotaPolicy = NO_QUOTAS,
    ) -> None:
        self.persistence = PostgresPersistence(
            url, schema_name=schema, pool_size=pool_size, quotas=quotas
        )
        super().__init__(
            live,
            self.persistence,
            max_retained_bytes=max_retained_bytes,
            max_snapshot_bytes=max_snapshot_bytes,
            quotas=quotas,
        )

    @classmethod
    def from_settings(cls, settings: Settings, live: LiveNotifier) -> Self:
        storage = settings.storage
        return cls(
            live,
            storage.postgres_url,
            max_retained_bytes=settings.limits.max_retained_bytes,
            max_snapshot_bytes=settings.limits.max_snapshot_bytes,
            schema=storage.postgres_schema,
            pool_size=storage.postgres_pool_size,
            quotas=quota_policy(settings),
        )

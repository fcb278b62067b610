"""The Postgres backend: streams in a database that several ds-server processes can share.

Every acknowledged write is committed (``synchronous_commit=on``);
concurrent appends share a transaction (group commit), and every write is
fenced on the stream's state version, so a process never stores a write
decided on a state another process has changed. Tables live in a schema of
their own (``DS_STORAGE__POSTGRES_SCHEMA``). See ``stores/_postgres``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ds_server.postgres_database import PostgresDatabase
from ds_server.stores._postgres import PostgresPersistence
from ds_server.stores._quotas import quota_policy

if TYPE_CHECKING:
    from ds_server.settings import Settings


def from_settings(settings: Settings) -> PostgresPersistence:
    """The ``postgres`` backend: streams in the database at ``DS_STORAGE__POSTGRES_URL``."""
    storage = settings.storage
    database = PostgresDatabase(
        storage.postgres_url,
        schema=storage.postgres_schema,
        pool_size=storage.postgres_pool_size,
    )
    return PostgresPersistence(database, quotas=quota_policy(settings))

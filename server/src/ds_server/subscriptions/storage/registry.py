"""Which subscription store goes with which stream backend (``DS_STORAGE__MODE``).

Subscriptions live beside the streams: nowhere for ``memory`` (the streams
do not outlive the process either), a SQLite file under the data directory
for the file and SQLite backends, and tables beside the streams' in the
same Postgres schema for the postgres backend, which several processes share.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from ds_server.postgres_database import PostgresDatabase
    from ds_server.settings import Settings
    from ds_server.subscriptions.storage.base import SubscriptionStorage


def _memory(settings: Settings, database: PostgresDatabase | None) -> SubscriptionStorage:
    from ds_server.subscriptions.storage.memory import MemorySubscriptionStorage

    return MemorySubscriptionStorage()


def _sqlite(settings: Settings, database: PostgresDatabase | None) -> SubscriptionStorage:
    from ds_server.subscriptions.storage.sqlite import SqliteSubscriptionStorage

    return SqliteSubscriptionStorage.from_settings(settings)


def _postgres(settings: Settings, database: PostgresDatabase | None) -> SubscriptionStorage:
    from ds_server.subscriptions.storage.postgres import PostgresSubscriptionStorage

    if database is None:
        raise NoSubscriptionStorage(
            "DS_STORAGE__MODE='postgres' keeps subscriptions in the stream store's database,"
            " and none was given"
        )
    return PostgresSubscriptionStorage(database)


# Imports stay inside the factories: a server loads only the store it uses.
STORAGES: dict[str, Callable[[Settings, PostgresDatabase | None], SubscriptionStorage]] = {
    "memory": _memory,
    "file-durable": _sqlite,
    "file-fast": _sqlite,
    "sqlite": _sqlite,
    "postgres": _postgres,
}


class NoSubscriptionStorage(ValueError):
    """The storage mode has no subscription store."""


def open_subscription_storage(
    settings: Settings, database: PostgresDatabase | None = None
) -> SubscriptionStorage:
    """The (not yet opened) subscription store for ``settings.storage.mode``.

    ``database``: the postgres backend's, whose pool the subscriptions share.
    """
    mode = settings.storage.mode
    factory = STORAGES.get(mode)
    if factory is None:
        raise NoSubscriptionStorage(f"DS_STORAGE__MODE={mode!r} has no subscription storage")
    return factory(settings, database)

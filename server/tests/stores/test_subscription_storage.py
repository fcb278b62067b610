"""The subscription storage contract, for every implementation; then each one's own cases.

Postgres runs against a real server (``postgres_db`` from ``ds_stack``);
"reopen" means a new instance on the same file or database, as a restarted
server would make.
"""

from __future__ import annotations

import asyncio
import stat
from typing import TYPE_CHECKING

import psycopg
import pytest
from ds_server.postgres_database import PostgresDatabase
from ds_server.subscriptions.model import SubscriptionSpec, SubscriptionType
from ds_server.subscriptions.storage import (
    MemorySubscriptionStorage,
    StoredLink,
    StoredSubscription,
    SubscriptionStorage,
    SubscriptionStorageError,
)
from ds_server.subscriptions.storage.postgres import PostgresSubscriptionStorage
from ds_server.subscriptions.storage.sqlite import SqliteSubscriptionStorage

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable
    from pathlib import Path

    Make = Callable[[], Awaitable[SubscriptionStorage]]


def _spec(sub_id: str, **changes: object) -> SubscriptionSpec:
    fields: dict[str, object] = {
        "id": sub_id,
        "type": SubscriptionType.PULL_WAKE,
        "pattern": "events/*",
        "streams": ("a/1", "b/2"),
        "webhook_url": None,
        "wake_stream": "wakes/w",
        "lease_ttl_ms": 5000,
        "description": "née ☃",
    }
    fields.update(changes)
    return SubscriptionSpec(**fields)  # type: ignore[arg-type]


def _record(sub_id: str, generation: int = 0, **links: StoredLink) -> StoredSubscription:
    return StoredSubscription(
        spec=_spec(sub_id),
        root_url="http://h:4437/v1/stream",
        created_at=1_700_000_000.125,
        generation=generation,
        links=links,
    )


GLOB = StoredLink(explicit=False, glob=True, acked=-1)
BOTH = StoredLink(explicit=True, glob=True, acked=40)


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def make(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Make]:
    """Opens storages on one place (memory: the same instance); closes them all after."""
    opened: list[SubscriptionStorage] = []
    databases: list[PostgresDatabase] = []
    memory = MemorySubscriptionStorage()

    def new() -> SubscriptionStorage:
        if request.param == "memory":
            return memory
        if request.param == "sqlite":
            return SqliteSubscriptionStorage(tmp_path / "subs" / "subscriptions.db")
        # A database of its own each, as each server process has.
        databases.append(PostgresDatabase(request.getfixturevalue("postgres_db"), schema="subs"))
        return PostgresSubscriptionStorage(databases[-1])

    async def factory() -> SubscriptionStorage:
        storage = new()
        await storage.open()
        opened.append(storage)
        return storage

    yield factory
    for storage in opened:
        await storage.close()
    for database in databases:
        await database.close()


async def test_everything_created_is_loaded_again(make: Make) -> None:
    storage = await make()
    assert await storage.load_all() == []
    second = _record("b-sub", 3, **{"a/1": BOTH})
    first = StoredSubscription(
        spec=_spec(
            "a-sub",
            type=SubscriptionType.WEBHOOK,
            webhook_url="https://x/h",
            wake_stream=None,
            pattern=None,
            description=None,
        ),
        root_url="https://streams.example/v1/stream",
        created_at=12.5,
        generation=0,
        links={},
    )
    await storage.create(second)
    await storage.create(first)
    reopened = await make()
    assert await reopened.load_all() == [first, second]


async def test_save_sets_generation_and_upserts_or_removes_links(
    make: Make,
) -> None:
    storage = await make()
    await storage.create(_record("s", 1, **{"a/1": BOTH, "events/x": GLOB}))
    moved = StoredLink(explicit=True, glob=True, acked=99)
    await storage.save("s", 7, {"a/1": moved, "events/x": None, "events/y": GLOB})
    await storage.save("s", 8, {})
    await storage.save("s", 6, {})  # a stale writer: the generation never goes down
    (loaded,) = await (await make()).load_all()
    assert loaded.generation == 8
    assert dict(loaded.links) == {"a/1": moved, "events/y": GLOB}


async def test_saving_an_unknown_subscription_stores_nothing(make: Make) -> None:
    storage = await make()
    await storage.save("ghost", 4, {"a/1": BOTH})
    assert await storage.load_all() == []


async def test_create_replaces_a_leftover_and_delete_forgets(make: Make) -> None:
    storage = await make()
    await storage.create(_record("s", 5, **{"a/1": BOTH}))
    fresh = _record("s", 0, **{"events/x": GLOB})
    await storage.create(fresh)
    assert await storage.load_all() == [fresh]
    await storage.create(_record("t"))
    await storage.delete("s")
    await storage.delete("never-was")
    assert [sub.spec.id for sub in await (await make()).load_all()] == ["t"]


async def test_the_first_secret_stored_wins(make: Make) -> None:
    storage = await make()
    assert await storage.get_secret("k") is None
    assert await storage.keep_secret("k", b"\x00first") == b"\x00first"
    assert await storage.keep_secret("k", b"second") == b"\x00first"
    other = await make()
    assert await other.get_secret("k") == b"\x00first"
    assert await other.keep_secret("k", b"third") == b"\x00first"


# -- SQLite ------------------------------------------------------------------


async def test_sqlite_file_is_private_and_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "subscriptions.db"
    storage = SqliteSubscriptionStorage(path)
    await storage.open()
    await storage.create(_record("s", 2))
    await storage.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = SqliteSubscriptionStorage(path)
    await again.open()
    assert [sub.generation for sub in await again.load_all()] == [2]
    await again.close()


async def test_sqlite_refuses_a_newer_schema(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "subscriptions.db"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    storage = SqliteSubscriptionStorage(path)
    with pytest.raises(SubscriptionStorageError, match="newer"):
        await storage.open()
    await storage.close()


async def test_sqlite_unreadable_spec_is_a_storage_error(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "subscriptions.db"
    storage = SqliteSubscriptionStorage(path)
    await storage.open()
    await storage.create(_record("s"))
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE subscriptions SET spec = '{\"id\": 1}'")
    with pytest.raises(SubscriptionStorageError, match="unreadable"):
        await storage.load_all()
    await storage.close()


async def test_sqlite_calls_before_open_fail_clearly(tmp_path: Path) -> None:
    storage = SqliteSubscriptionStorage(tmp_path / "s.db")
    with pytest.raises(SubscriptionStorageError, match="not open"):
        await storage.load_all()


# -- Postgres ----------------------------------------------------------------


async def test_postgres_processes_starting_together_share_one_schema(postgres_db: str) -> None:
    databases = [PostgresDatabase(postgres_db, schema="shared") for _ in range(3)]
    databases.append(PostgresDatabase(postgres_db, schema="other"))
    storages = [PostgresSubscriptionStorage(database) for database in databases[:3]]
    await asyncio.gather(*(storage.open() for storage in storages))
    secrets = await asyncio.gather(
        *(storage.keep_secret("k", bytes([n])) for n, storage in enumerate(storages))
    )
    assert len(set(secrets)) == 1
    await storages[0].create(_record("s"))
    assert [sub.spec.id for sub in await storages[2].load_all()] == ["s"]
    elsewhere = PostgresSubscriptionStorage(databases[3])
    await elsewhere.open()
    assert await elsewhere.load_all() == []
    for storage in [*storages, elsewhere]:
        await storage.close()
    for database in databases:
        await database.close()


async def test_postgres_recovers_from_a_dropped_connection(postgres_db: str) -> None:
    database = PostgresDatabase(postgres_db)
    storage = PostgresSubscriptionStorage(database)
    await storage.open()
    await storage.create(_record("s"))
    async with await psycopg.AsyncConnection.connect(postgres_db, autocommit=True) as admin:
        await admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    await storage.save("s", 1, {})
    assert [sub.generation for sub in await storage.load_all()] == [1]
    await storage.close()
    await database.close()


async def test_postgres_unreachable_is_a_storage_error() -> None:
    database = PostgresDatabase("postgresql://127.0.0.1:1/none", connect_timeout_secs=0.5)
    storage = PostgresSubscriptionStorage(database)
    with pytest.raises(SubscriptionStorageError, match=r"cannot connect to 127\.0\.0\.1:1/none"):
        await storage.open()
    await storage.close()
    await database.close()

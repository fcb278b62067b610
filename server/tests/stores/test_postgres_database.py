"""ds_server.postgres_database: one owner of a server's connections to its database.

The connections are counted in ``pg_stat_activity`` of a database of the
test's own (``postgres_db``), by the ``application_name`` each role sets:
while an app on the postgres backend serves (in process, on the test's
loop), and after it shut down.
"""

from __future__ import annotations

import asyncio
import collections
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
from ds_server.app import create_app
from ds_server.postgres_database import LEADER, LISTEN, POOL, PostgresDatabase, application_name
from ds_server.settings import Settings, StorageSection
from ds_server.stores.errors import StorageUnavailable
from litestar.testing import AsyncTestClient
from psycopg_pool import PoolTimeout

if TYPE_CHECKING:
    from collections import Counter

BASE = "http://testserver.local"
JSON = {"Content-Type": "application/json"}
POOL_SIZE = 3
SERVER_ROLES = {application_name(role) for role in ("pool", "writer", "listen", "leader")}


async def held_connections(url: str) -> Counter[str]:
    """The database's client connections other than this query's, by application_name."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as admin:
        cursor = await admin.execute(
            "SELECT application_name FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return collections.Counter(str(row[0]) for row in await cursor.fetchall())


async def until_none_held(url: str) -> Counter[str]:
    """What is still connected once closed connections' backends had time to exit (or none)."""
    # A backend leaves pg_stat_activity a moment after its client said goodbye.
    for _ in range(100):
        held = await held_connections(url)
        if not held:
            return held
        await asyncio.sleep(0.1)
    return held


def postgres_settings(url: str) -> Settings:
    """The defaults of every section, never the environment's, on the postgres backend."""
    sections: dict[str, Any] = {
        name: field.get_default(call_default_factory=True)
        for name, field in Settings.model_fields.items()
    }
    sections["storage"] = StorageSection(
        mode="postgres", postgres_url=url, postgres_pool_size=POOL_SIZE
    )
    return Settings(**sections)


async def test_a_server_holds_one_connection_per_role_and_leaves_none(postgres_db: str) -> None:
    app = create_app(postgres_settings(postgres_db))
    async with AsyncTestClient(app=app, base_url=BASE) as client:
        # Streams written and read many at once, and a subscription stored: every user
        # of the database (store, change feed, leadership, subscriptions) has been busy.
        assert (await client.put("/v1/stream/wake/pool", headers=JSON)).status_code == 201
        created = await client.put(
            "/v1/stream/__ds/subscriptions/counted",
            headers=JSON,
            json={"type": "pull-wake", "pattern": "events/*", "wake_stream": "wake/pool"},
        )
        assert created.status_code in (200, 201), created.text
        paths = [f"/v1/stream/events/{n}" for n in range(12)]
        for path in paths:
            assert (await client.put(path, headers=JSON)).status_code == 201
        await asyncio.gather(*(client.post(path, headers=JSON, content=b"[1]") for path in paths))
        reads = await asyncio.gather(*(client.get(f"{path}?offset=-1") for path in paths))
        assert [read.status_code for read in reads] == [200] * len(paths)
        assert (await client.get("/v1/stream/__ds/subscriptions/counted")).status_code == 200

        held = await held_connections(postgres_db)
        assert set(held) == SERVER_ROLES, held
        # One session connection each; the store and the subscriptions share one pool.
        assert held[application_name("writer")] == 1
        assert held[application_name(LISTEN)] == 1
        assert held[application_name(LEADER)] == 1
        assert 1 <= held[application_name(POOL)] <= POOL_SIZE
    assert await until_none_held(postgres_db) == collections.Counter()


async def test_closing_closes_every_connection_handed_out_once(postgres_db: str) -> None:
    database = PostgresDatabase(postgres_db, schema="closing")
    await database.open()
    session = await database.connect(LISTEN)
    blocking = await asyncio.to_thread(database.connect_blocking, "writer")
    async with database.connection() as pooled:
        await pooled.execute("SELECT 1")
    assert set(await held_connections(postgres_db)) == {
        application_name(role) for role in (POOL, LISTEN, "writer")
    }
    await database.close()
    await database.close()  # a second close does nothing
    assert session.closed
    assert blocking.closed
    assert await until_none_held(postgres_db) == collections.Counter()
    # Nothing new is handed out once closed, and a reconnecting loop takes that as a failure.
    with pytest.raises(psycopg.OperationalError):
        await database.connect(LISTEN)


async def test_a_session_lost_is_reconnected_and_prepared_again(postgres_db: str) -> None:
    prepared: list[str] = []

    async def prepare(conn: psycopg.AsyncConnection[Any]) -> None:
        await conn.execute("LISTEN somewhere")
        prepared.append(application_name(LISTEN))

    async with PostgresDatabase(postgres_db).opened() as database:
        first = await database.session(LISTEN, prepare)
        async with await psycopg.AsyncConnection.connect(postgres_db, autocommit=True) as admin:
            await admin.execute("SELECT pg_terminate_backend(%s)", (first.info.backend_pid,))
        again = await database.reconnect(LISTEN, prepare)
        assert (await (await again.execute("SELECT 1")).fetchone()) == (1,)
        assert prepared == [application_name(LISTEN)] * 2
        assert again.info.backend_pid != first.info.backend_pid
    assert again.closed


async def test_a_lost_pooled_connection_is_run_again_but_a_busy_pool_is_not(
    postgres_db: str,
) -> None:
    database = PostgresDatabase(postgres_db, pool_size=1, pool_timeout_secs=0.2)
    calls: list[int] = []

    async def backend_pid(conn: psycopg.AsyncConnection[Any]) -> int:
        calls.append(conn.info.backend_pid)
        row = await (await conn.execute("SELECT pg_backend_pid()")).fetchone()
        assert row is not None
        return int(row[0])

    async with database.opened():
        first = await database.run(backend_pid)
        async with await psycopg.AsyncConnection.connect(postgres_db, autocommit=True) as admin:
            await admin.execute("SELECT pg_terminate_backend(%s)", (first,))
        # The broken connection failed the first try; the second ran on a fresh one.
        assert await database.run(backend_pid) != first
        assert calls[-2] == first
        async with database.connection():
            errors = database.pool_stats.get("requests_errors", 0)
            with pytest.raises(PoolTimeout):
                await database.run(backend_pid)
            # Asked the pool once: waiting as long again would only delay the answer.
            assert database.pool_stats.get("requests_errors", 0) == errors + 1


async def test_an_unreachable_database_is_named_without_its_password() -> None:
    database = PostgresDatabase(
        "postgresql://user:s3cret@127.0.0.1:1/none", connect_timeout_secs=0.5
    )
    with pytest.raises(
        StorageUnavailable, match=r"POSTGRES_URL: cannot connect to 127\.0\.0\.1:1/"
    ) as error:
        await database.open()
    assert "s3cret" not in str(error.value)
    await database.close()

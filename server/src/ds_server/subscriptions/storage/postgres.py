"""Subscriptions in Postgres: shared by every server process on one database.

Three tables in a schema of their own (default ``ds_server``, beside the
stream store's tables; never the sessions tables): ``subscriptions``,
``subscription_links`` and ``subscription_secrets``, as in the SQLite store.
Created idempotently by ``open``, under an advisory lock so processes
starting together don't race. Each call is one transaction on a connection
of the pool the process shares with its stream store (``PostgresDatabase``);
a call that meets a broken connection (the database restarted) runs once more
on a fresh one: every call is idempotent, so a repeat after an unknown
outcome changes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, LiteralString, TypeVar

import psycopg
from psycopg import sql

from ds_server.stores.errors import StorageUnavailable
from ds_server.subscriptions.storage.base import (
    StoredLink,
    StoredSubscription,
    SubscriptionStorage,
    SubscriptionStorageError,
)
from ds_server.subscriptions.storage.codec import decode_spec, encode_spec

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from ds_server.postgres_database import PostgresDatabase

T = TypeVar("T")


_TABLES = """
CREATE SCHEMA IF NOT EXISTS {schema};
CREATE TABLE IF NOT EXISTS {schema}.subscriptions (
    id text PRIMARY KEY,
    spec jsonb NOT NULL,
    root_url text NOT NULL,
    created_at double precision NOT NULL,
    generation bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS {schema}.subscription_links (
    subscription_id text NOT NULL REFERENCES {schema}.subscriptions(id) ON DELETE CASCADE,
    path text NOT NULL,
    explicit boolean NOT NULL,
    glob boolean NOT NULL,
    acked bigint NOT NULL,
    PRIMARY KEY (subscription_id, path)
);
CREATE TABLE IF NOT EXISTS {schema}.subscription_secrets (
    name text PRIMARY KEY,
    value bytea NOT NULL
);
"""

Conn = psycopg.AsyncConnection[Any]


class PostgresSubscriptionStorage(SubscriptionStorage):
    """Subscriptions in ``database``, in its schema; the database is its owner's to close."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._database = database
        self._schema = sql.Identifier(database.schema)

    async def open(self) -> None:
        try:
            await self._database.open()
        except StorageUnavailable as exc:
            raise SubscriptionStorageError(f"subscription storage: {exc}") from exc

        async def work(conn: Conn) -> None:
            # Serializes concurrent CREATE ... IF NOT EXISTS, which can still collide.
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext('ds_subscriptions'))")
            await conn.execute(sql.SQL(_TABLES).format(schema=self._schema))

        await self._transaction(work)

    async def close(self) -> None:
        return None  # nothing of its own: the pooled connections are the database's

    async def load_all(self) -> list[StoredSubscription]:
        async def work(conn: Conn) -> list[StoredSubscription]:
            links: dict[str, dict[str, StoredLink]] = {}
            cursor = await conn.execute(
                self._sql(
                    "SELECT subscription_id, path, explicit, glob, acked"
                    " FROM {schema}.subscription_links"
                )
            )
            for sub_id, path, explicit, glob, acked in await cursor.fetchall():
                links.setdefault(sub_id, {})[path] = StoredLink(explicit, glob, acked)
            cursor = await conn.execute(
                self._sql(
                    "SELECT id, spec::text, root_url, created_at, generation"
                    " FROM {schema}.subscriptions ORDER BY id"
                )
            )
            return [
                StoredSubscription(
                    spec=decode_spec(spec),
                    root_url=root_url,
                    created_at=created_at,
                    generation=generation,
                    links=links.get(sub_id, {}),
                )
                for sub_id, spec, root_url, created_at, generation in await cursor.fetchall()
            ]

        # One snapshot of both tables.
        return await self._transaction(work, snapshot=True)

    async def create(self, sub: StoredSubscription) -> None:
        async def work(conn: Conn) -> None:
            await conn.execute(
                self._sql("DELETE FROM {schema}.subscriptions WHERE id = %s"), (sub.spec.id,)
            )
            await conn.execute(
                self._sql("INSERT INTO {schema}.subscriptions VALUES (%s, %s::jsonb, %s, %s, %s)"),
                (sub.spec.id, encode_spec(sub.spec), sub.root_url, sub.created_at, sub.generation),
            )
            await self._upsert_links(conn, sub.spec.id, sub.links)

        await self._transaction(work)

    async def save(
        self, sub_id: str, generation: int, links: Mapping[str, StoredLink | None]
    ) -> None:
        async def work(conn: Conn) -> None:
            updated = await conn.execute(
                self._sql(
                    "UPDATE {schema}.subscriptions SET generation = GREATEST(generation, %s)"
                    " WHERE id = %s"
                ),
                (generation, sub_id),
            )
            if updated.rowcount == 0:
                return  # deleted meanwhile
            gone = [path for path, link in links.items() if link is None]
            if gone:
                await conn.execute(
                    self._sql(
                        "DELETE FROM {schema}.subscription_links"
                        " WHERE subscription_id = %s AND path = ANY(%s)"
                    ),
                    (sub_id, gone),
                )
            kept = {path: link for path, link in links.items() if link is not None}
            await self._upsert_links(conn, sub_id, kept)

        await self._transaction(work)

    async def delete(self, sub_id: str) -> None:
        async def work(conn: Conn) -> None:
            await conn.execute(
                self._sql("DELETE FROM {schema}.subscriptions WHERE id = %s"), (sub_id,)
            )

        await self._transaction(work)

    async def get_secret(self, name: str) -> bytes | None:
        async def work(conn: Conn) -> bytes | None:
            cursor = await conn.execute(
                self._sql("SELECT value FROM {schema}.subscription_secrets WHERE name = %s"),
                (name,),
            )
            row = await cursor.fetchone()
            return None if row is None else bytes(row[0])

        return await self._transaction(work)

    async def keep_secret(self, name: str, candidate: bytes) -> bytes:
        async def work(conn: Conn) -> bytes:
            await conn.execute(
                self._sql(
                    "INSERT INTO {schema}.subscription_secrets VALUES (%s, %s)"
                    " ON CONFLICT (name) DO NOTHING"
                ),
                (name, candidate),
            )
            cursor = await conn.execute(
                self._sql("SELECT value FROM {schema}.subscription_secrets WHERE name = %s"),
                (name,),
            )
            row = await cursor.fetchone()
            assert row is not None  # inserted above, or there already
            return bytes(row[0])

        return await self._transaction(work)

    async def _upsert_links(self, conn: Conn, sub_id: str, links: Mapping[str, StoredLink]) -> None:
        if not links:
            return
        async with conn.cursor() as cursor:
            await cursor.executemany(
                self._sql(
                    "INSERT INTO {schema}.subscription_links VALUES (%s, %s, %s, %s, %s)"
                    " ON CONFLICT (subscription_id, path) DO UPDATE SET"
                    " explicit = EXCLUDED.explicit, glob = EXCLUDED.glob, acked = EXCLUDED.acked"
                ),
                [
                    (sub_id, path, link.explicit, link.glob, link.acked)
                    for path, link in links.items()
                ],
            )

    def _sql(self, text: LiteralString) -> sql.Composed:
        return sql.SQL(text).format(schema=self._schema)

    async def _transaction(
        self, work: Callable[[Conn], Awaitable[T]], *, snapshot: bool = False
    ) -> T:
        """Run ``work`` in one transaction; database errors become SubscriptionStorageError."""

        async def in_transaction(conn: Conn) -> T:
            async with conn.transaction():
                if snapshot:
                    await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                return await work(conn)

        try:
            return await self._database.run(in_transaction)
        except psycopg.Error as exc:
            raise SubscriptionStorageError(f"subscription storage: {exc}") from exc

"""The subscription leader: the one replica that runs wakes, chosen through Postgres.

Wakes, leases and webhook retries are timers and in-process state; two
replicas running them would wake consumers twice. So one replica leads:
the holder of a session-level Postgres advisory lock. The lock dies with
its connection (a killed replica's within a moment), and another replica
takes it within a second. The leader publishes the URL the others reach it
at, and they forward subscription requests there (``forwarding``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import sql

from ds_server.postgres_database import LEADER

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from ds_server.postgres_database import PostgresDatabase

log = logging.getLogger("ds_server.cluster")

Conn = psycopg.AsyncConnection[Any]

# Any fixed 64-bit key, the same on every replica: "ds-subs" in ASCII. It is
# the default schema's, as it always was (a rolling upgrade never has two leaders).
LOCK_KEY = 0x64732D73756273
DEFAULT_SCHEMA = "ds_server"
RETRY_SECS = 1.0


def lock_key(schema: str) -> int:
    """The advisory lock of ``schema``'s leader: a key of its own for every schema.

    Advisory locks are per database, and deployments on one database keep
    apart by schema: with one key for all, the first deployment's leader
    kept every other from ever electing one (its subscription API 503).
    """
    if schema == DEFAULT_SCHEMA:
        return LOCK_KEY
    digest = hashlib.blake2b(f"ds-subs:{schema}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class Leadership:
    """Campaign for the lead; call ``on_elected``/``on_deposed`` as it is won and lost."""

    def __init__(
        self,
        database: PostgresDatabase,
        advertise_url: str,
        on_elected: Callable[[], Awaitable[None]],
        on_deposed: Callable[[], Awaitable[None]],
    ) -> None:
        schema = database.schema
        self.database = database
        self._table = sql.Identifier(schema, "subscription_leader")
        self._schema = sql.Identifier(schema)
        self._lock_key = lock_key(schema)
        self.advertise_url = advertise_url
        self._on_elected = on_elected
        self._on_deposed = on_deposed
        self.is_leader = False
        self.leader_url: str | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Take the lead, or learn who has it, before returning (then keep campaigning)."""
        first: Conn | None = None
        try:
            first = await self.database.session(LEADER, self._prepare)
            await self._round(first)
        except (psycopg.Error, OSError) as error:
            log.warning("subscription leadership: %s; retrying", error)
            if first is not None:
                await first.close()
            first = None
        self._task = asyncio.create_task(self._campaign(first))

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self.is_leader:
            await self._depose()

    async def _campaign(self, conn: Conn | None) -> None:
        while True:
            try:
                async with conn or await self._reconnect() as held:
                    while True:
                        await asyncio.sleep(RETRY_SECS)
                        await self._round(held)
            except (psycopg.Error, OSError) as error:
                conn = None
                log.warning("subscription leadership: %s; retrying", error)
                if self.is_leader:
                    await self._depose()
                await asyncio.sleep(RETRY_SECS)

    async def _reconnect(self) -> Conn:
        # Tried every second at most, as a lock another replica dropped is looked for.
        return await self.database.reconnect(LEADER, self._prepare, max_delay_secs=RETRY_SECS)

    async def _prepare(self, conn: Conn) -> None:
        await conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(self._schema))
        await conn.execute(
            sql.SQL(
                "CREATE TABLE IF NOT EXISTS {} (one boolean PRIMARY KEY DEFAULT true CHECK (one),"
                " url text NOT NULL, since timestamptz NOT NULL DEFAULT now())"
            ).format(self._table)
        )

    async def _round(self, conn: Conn) -> None:
        """One look: take the lock if free; otherwise learn who holds it. Checks the link too."""
        if self.is_leader:
            await conn.execute("SELECT 1")  # still connected, so still holding the lock
            return
        lock = "SELECT pg_try_advisory_lock(%s)"
        row = await (await conn.execute(lock, (self._lock_key,))).fetchone()
        if row is not None and row[0]:
            await conn.execute(
                sql.SQL(
                    "INSERT INTO {} (url) VALUES (%s) ON CONFLICT (one)"
                    " DO UPDATE SET url = excluded.url, since = now()"
                ).format(self._table),
                (self.advertise_url,),
            )
            self.is_leader = True
            self.leader_url = self.advertise_url
            log.info("this replica now runs the subscriptions (%s)", self.advertise_url)
            await self._on_elected()
            return
        found = await (
            await conn.execute(sql.SQL("SELECT url FROM {}").format(self._table))
        ).fetchone()
        self.leader_url = str(found[0]) if found else None

    async def _depose(self) -> None:
        self.is_leader = False
        self.leader_url = None
        log.warning("this replica no longer runs the subscriptions")
        await self._on_deposed()

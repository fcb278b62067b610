"""One owner of a process's connections to its Postgres database (the postgres backend).

The stream store, the subscription storage and the replicas' leadership all
talk to the database ``DS_STORAGE__POSTGRES_URL`` names. They share this one
object: it holds the connect options (timeouts, keepalives, the schema's
search path), gives the one "cannot connect" error, owns the one pool their
short reads and transactions share, and hands out the session connections
that must not be pooled (the writer's, the change feed's LISTEN, the
leadership's advisory lock), reconnecting them with backoff when asked.
Every connection carries ``application_name=ds-server:<role>``, so
``pg_stat_activity`` shows who holds what. ``close`` closes everything it
opened, once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from typing import TYPE_CHECKING, Any, TypeVar

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from ds_server.stores.errors import StorageUnavailable

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

log = logging.getLogger("ds_server.postgres")

T = TypeVar("T")

AsyncConn = psycopg.AsyncConnection[Any]
BlockingConn = psycopg.Connection[Any]

DEFAULT_SCHEMA = "ds_server"
# An unreachable host fails with 503 after this, not after TCP's minutes.
CONNECT_TIMEOUT_SECS = 10.0
# How long a pooled call waits for a free connection before answering 503.
POOL_TIMEOUT_SECS = 10.0
# A dead peer (a host gone without closing) is noticed within about a minute,
# also on the idle LISTEN and leadership connections.
_KEEPALIVES = {"keepalives": 1, "keepalives_idle": 30, "keepalives_interval": 10}
_FIRST_RETRY_SECS = 0.05
_LAST_RETRY_SECS = 5.0

# The roles, as ``application_name`` shows them.
POOL = "pool"
WRITER = "writer"
LISTEN = "listen"
LEADER = "leader"


def application_name(role: str) -> str:
    """What ``pg_stat_activity.application_name`` says of a connection of ``role``."""
    return f"ds-server:{role}"


class PostgresDatabase:
    """The connections of this process to the database at ``url``, tables in ``schema``."""

    def __init__(
        self,
        url: str,
        *,
        schema: str = DEFAULT_SCHEMA,
        pool_size: int = 8,
        connect_timeout_secs: float = CONNECT_TIMEOUT_SECS,
        pool_timeout_secs: float = POOL_TIMEOUT_SECS,
    ) -> None:
        self.url = url
        self.schema = schema
        self._connect_timeout = connect_timeout_secs
        self._pool_timeout = pool_timeout_secs
        self._pool = AsyncConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            kwargs=self.options(POOL),
            open=False,
            timeout=pool_timeout_secs,
            name="ds-server",
        )
        self._opening = asyncio.Lock()
        self._opened = False
        self._closed = False
        # The session connections handed out and not yet seen closed; the writer's
        # thread adds to it too, hence the lock.
        self._sessions: set[AsyncConn | BlockingConn] = set()
        self._sessions_lock = threading.Lock()

    def options(self, role: str) -> dict[str, Any]:
        """The connect options of every connection of ``role``."""
        return {
            "autocommit": True,
            # search_path: the store's statements name its tables unqualified.
            # synchronous_commit: acknowledged = flushed, whatever the database's default.
            "options": f"-c search_path={self.schema} -c synchronous_commit=on",
            "application_name": application_name(role),
            # libpq takes whole seconds; at least one, or it means "wait forever".
            "connect_timeout": max(1, round(self._connect_timeout)),
            **_KEEPALIVES,
        }

    # -- the pool ---------------------------------------------------------------

    async def open(self) -> None:
        """Open the pool; the first caller waits for it, later ones return at once.

        Raises ``StorageUnavailable`` naming the database (never the password)
        if it can't be reached.
        """
        async with self._opening:
            if self._opened:
                return
            if self._closed:
                raise StorageUnavailable("the database connections were closed")
            # One connection first: its error says why, where the pool would only time out.
            probe = await self._connect_or_explain(POOL)
            await probe.close()
            try:
                await self._pool.open(wait=True, timeout=self._connect_timeout + self._pool_timeout)
            except PoolTimeout as error:
                raise StorageUnavailable(f"the database connection pool: {error}") from None
            self._opened = True

    @property
    def pool_stats(self) -> dict[str, int]:
        """The pool's counters (``psycopg_pool``'s ``get_stats``), for tests and metrics."""
        return self._pool.get_stats()

    def connection(self) -> contextlib.AbstractAsyncContextManager[AsyncConn]:
        """A pooled connection for the block (autocommit; ``transaction()`` for more)."""
        return self._pool.connection()

    async def run(self, work: Callable[[AsyncConn], Awaitable[T]]) -> T:
        """``work`` on a pooled connection; once more on a fresh one if that one was lost.

        After a database restart every idle pooled connection is broken: the
        first call to meet one drops the others too. So ``work`` may run twice,
        the first time with an unknown outcome: it must be a read, or a write
        that repeating changes nothing. Raises what psycopg raises, ``PoolTimeout``
        (all connections busy) at once.
        """
        for attempt in range(2):
            try:
                async with self._pool.connection() as conn:
                    return await work(conn)
            except PoolTimeout:
                raise  # waiting as long again would only delay the 503
            except psycopg.OperationalError:
                if attempt == 1:
                    raise
                await self._pool.check()
        raise AssertionError("unreachable")

    # -- session connections ----------------------------------------------------

    async def connect(self, role: str) -> AsyncConn:
        """A connection of its own for ``role``, outside the pool; closed with the database."""
        self._refuse_if_closed()
        conn = await psycopg.AsyncConnection.connect(self.url, **self.options(role))
        self._keep(conn)
        return conn

    def connect_blocking(self, role: str) -> BlockingConn:
        """Like ``connect``, blocking: for a thread of its own (the writer's)."""
        self._refuse_if_closed()
        conn = psycopg.Connection.connect(self.url, **self.options(role))
        self._keep(conn)
        return conn

    async def reconnect(
        self,
        role: str,
        prepare: Callable[[AsyncConn], Awaitable[None]] | None = None,
        *,
        max_delay_secs: float = _LAST_RETRY_SECS,
    ) -> AsyncConn:
        """A new ``session(role, prepare)``, retried with backoff (up to ``max_delay_secs``
        between tries) until it works."""
        delay = min(_FIRST_RETRY_SECS, max_delay_secs)
        while True:
            await asyncio.sleep(delay)
            try:
                return await self.session(role, prepare)
            except (psycopg.Error, OSError) as error:
                log.warning("%s connection: reconnecting failed (%s); retrying", role, error)
                delay = min(delay * 2, max_delay_secs)

    async def session(
        self, role: str, prepare: Callable[[AsyncConn], Awaitable[None]] | None = None
    ) -> AsyncConn:
        """``connect(role)`` with ``prepare`` run on it; closed again if that fails."""
        conn = await self.connect(role)
        if prepare is not None:
            try:
                await prepare(conn)
            except BaseException:
                await conn.close()
                raise
        return conn

    # -- closing ----------------------------------------------------------------

    async def close(self) -> None:
        """Close the pool and every session connection still open; later calls do nothing."""
        if self._closed:
            return
        self._closed = True
        await self._pool.close()
        with self._sessions_lock:
            sessions, self._sessions = self._sessions, set()
        for conn in sessions:
            with contextlib.suppress(psycopg.Error):
                if isinstance(conn, psycopg.AsyncConnection):
                    await conn.close()
                else:
                    await asyncio.to_thread(conn.close)

    @contextlib.asynccontextmanager
    async def opened(self) -> AsyncIterator[PostgresDatabase]:
        """The database, open for the block and closed after it."""
        try:
            await self.open()
            yield self
        finally:
            await self.close()

    def _refuse_if_closed(self) -> None:
        if self._closed:
            # A connection error: whoever reconnects in a loop treats it as one.
            raise psycopg.OperationalError("the database connections were closed")

    def _keep(self, conn: AsyncConn | BlockingConn) -> None:
        # Drop the ones closed meanwhile: a feed that reconnects often must not pile them up.
        with self._sessions_lock:
            self._sessions = {held for held in self._sessions if not held.closed}
            self._sessions.add(conn)

    async def _connect_or_explain(self, role: str) -> AsyncConn:
        try:
            return await psycopg.AsyncConnection.connect(self.url, **self.options(role))
        except psycopg.OperationalError as error:
            # Named without the password the URL may hold.
            where = conninfo_to_dict(self.url)
            target = f"{where.get('host', '')}:{where.get('port', '')}/{where.get('dbname', '')}"
            raise StorageUnavailable(
                f"DS_STORAGE__POSTGRES_URL: cannot connect to {target}: {error}"
            ) from None

"""The change feed: ``pg_notify`` inside each write transaction, and a listener that reconnects.

Every committed change is announced on one channel per schema, from inside
the transaction that makes it, so a notification is delivered if and only if
its change committed, and in commit order. The payload is a compact JSON
array ``[kind, stream_id, path, version, tail, closed, origin]``. Postgres
refuses payloads of 8000 bytes or more; paths are at most
``protocol.names.MAX_PATH_BYTES`` (1024) bytes, and JSON escapes a byte into
at most 6, so a payload stays under 6.5 kB.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from typing import TYPE_CHECKING, Any

import msgspec
import psycopg

from ds_server.postgres_database import LISTEN
from ds_server.stores.persistence import StreamChange

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from ds_server.postgres_database import PostgresDatabase

log = logging.getLogger("ds_server.postgres")

# The append announcements of a batch, one per stream, read from the rows the
# batch just wrote (locked by it until COMMIT, so they hold its last version).
_NOTIFY_APPENDS = """
    SELECT pg_notify(%(channel)s, json_build_array(
        'append', stream_id, path, version, tail, closed, %(origin)s::text)::text)
    FROM streams WHERE stream_id = ANY(%(ids)s::text[])
    ORDER BY stream_id
"""
_Payload = tuple[str, str, str, int, int, bool, str]


def channel_name(schema: str) -> str:
    """The notification channel of the backend in ``schema``."""
    return f"{schema}_changes"


def encode(change: StreamChange) -> str:
    """The payload of ``change``."""
    fields = (
        change.kind,
        change.stream_id,
        change.path,
        change.version,
        change.tail,
        change.closed,
        change.origin,
    )
    return msgspec.json.encode(fields).decode()


def decode(payload: str) -> StreamChange:
    """The change a payload announces."""
    kind, stream_id, path, version, tail, closed, origin = msgspec.json.decode(
        payload, type=_Payload
    )
    return StreamChange(kind, stream_id, path, version, tail, closed, origin)


def notify(conn: psycopg.Connection[Any], channel: str, change: StreamChange) -> None:
    """Announce ``change`` when the current transaction commits."""
    conn.execute("SELECT pg_notify(%s, %s)", (channel, encode(change)))


def notify_appends(
    conn: psycopg.Connection[Any], channel: str, origin: str, stream_ids: Sequence[str]
) -> None:
    """Announce the appends of a batch: one change per stream, with its last version."""
    if stream_ids:
        conn.execute(
            _NOTIFY_APPENDS, {"channel": channel, "origin": origin, "ids": list(stream_ids)}
        )


class Listener:
    """A dedicated connection LISTENing on the channel; reconnects with backoff when lost."""

    def __init__(
        self,
        database: PostgresDatabase,
        channel: str,
        on_change: Callable[[StreamChange | None], None],
    ) -> None:
        self._database = database
        self._channel = channel
        self._on_change = on_change
        self._task: asyncio.Task[None] | None = None
        self.reconnects = 0

    async def start(self) -> None:
        """Listen from now on; returns once the LISTEN is in place."""
        conn = await self._database.session(LISTEN, self._listen)
        self._task = asyncio.create_task(self._run(conn), name="ds-postgres-listener")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _listen(self, conn: psycopg.AsyncConnection[Any]) -> None:
        await conn.execute(
            psycopg.sql.SQL("LISTEN {}").format(psycopg.sql.Identifier(self._channel))
        )

    async def _run(self, conn: psycopg.AsyncConnection[Any]) -> None:
        while True:
            try:
                async for notice in conn.notifies():
                    try:
                        change = decode(notice.payload)
                    except (msgspec.DecodeError, msgspec.ValidationError):
                        # Not ours (someone else NOTIFYing on the channel): skip it.
                        log.warning(
                            "change feed: ignored a malformed payload %.80r", notice.payload
                        )
                        continue
                    self._deliver(change)
            except psycopg.Error as error:
                log.warning("change feed connection lost (%s); reconnecting", error)
            finally:
                with contextlib.suppress(psycopg.Error):
                    await conn.close()
            conn = await self._database.reconnect(LISTEN, self._listen)
            self.reconnects += 1
            # Changes committed while we were away were not delivered.
            self._deliver(None)

    def _deliver(self, change: StreamChange | None) -> None:
        try:
            self._on_change(change)
        except Exception:
            # One failing callback must not end the feed for every later change.
            log.exception("change feed callback failed")


# A barrier's own notification: no stream changed; it marks a point in commit order.
BARRIER = "barrier"
_BARRIER_TIMEOUT_SECS = 10.0


class Barriers:
    """``barrier()``: a notification of our own, sent now and awaited through the feed.

    Notifications arrive in commit order, so once ours is back every change
    committed before it has been delivered too.
    """

    def __init__(self, channel: str, origin: str) -> None:
        self._channel = channel
        self._origin = origin
        self._waiting: dict[str, asyncio.Future[None]] = {}

    def passing(
        self, on_change: Callable[[StreamChange | None], None]
    ) -> Callable[[StreamChange | None], None]:
        """``on_change`` behind a filter that takes barriers out of the feed."""

        def deliver(change: StreamChange | None) -> None:
            if change is None:
                # Reconnected: a barrier sent meanwhile may be lost; the caller resyncs anyway.
                self._release_all()
            elif change.kind == BARRIER:
                waiter = self._waiting.pop(change.stream_id, None)
                if waiter is not None and not waiter.done():
                    waiter.set_result(None)
                return
            on_change(change)

        return deliver

    async def cross(
        self,
        run: Callable[[Callable[[psycopg.AsyncConnection[Any]], Awaitable[Any]]], Awaitable[Any]],
    ) -> None:
        token = secrets.token_hex(8)
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting[token] = waiter
        marker = StreamChange(BARRIER, token, "", 0, 0, False, self._origin)

        async def send(conn: psycopg.AsyncConnection[Any]) -> None:
            await conn.execute("SELECT pg_notify(%s, %s)", (self._channel, encode(marker)))

        try:
            await run(send)
            async with asyncio.timeout(_BARRIER_TIMEOUT_SECS):
                await asyncio.shield(waiter)
        finally:
            self._waiting.pop(token, None)

    def _release_all(self) -> None:
        waiting, self._waiting = self._waiting, {}
        for waiter in waiting.values():
            if not waiter.done():
                waiter.set_result(None)

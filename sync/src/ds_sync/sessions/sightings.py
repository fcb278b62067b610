"""Streams seen by one process of a group, passed to the others (Postgres NOTIFY).

Every process of a group reads the same wake stream, and whichever claims a
wake learns the streams with new data, of every shard. Before acking the
wake, the claimer publishes the ones of shards it does not hold, as
``(path, tail)`` pairs on the channel ``ds_sync_{name}``. Every process
listens on its own connection and takes what belongs to its shards (and
remembers the rest: a shard taken over later starts from what is known).
A notification exists only once its transaction committed, and the claimer
acks only after that; a claimer killed in between leaves the wake unacked,
and it is announced again. A process whose listening connection dropped may
have missed some: it lists the streams again, as after a lost wake stream.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

import msgspec
import psycopg
from psycopg import sql

from ds_sync.backoff import Backoff

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from psycopg_pool import AsyncConnectionPool

log = logging.getLogger("ds_sync.sightings")

# NOTIFY payloads must stay under 8000 bytes.
_PAYLOAD_BYTES = 7000
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(list[tuple[str, int]]).decode


def channel(name: str) -> str:
    """The group's channel (``DS_SYNC__NAME`` is at most 40 characters of ``[a-z0-9_-]``)."""
    return f"ds_sync_{name}"


def payloads(sightings: list[tuple[str, int]]) -> list[bytes]:
    """``sightings`` as NOTIFY payloads, each a JSON array under the size limit."""
    found: list[bytes] = []
    batch: list[tuple[str, int]] = []
    size = 2
    for path, tail in sightings:
        entry = len(path.encode("utf-8")) + 28
        if batch and size + entry > _PAYLOAD_BYTES:
            found.append(_encode(batch))
            batch, size = [], 2
        batch.append((path, tail))
        size += entry
    if batch:
        found.append(_encode(batch))
    return found


class Sightings:
    """Publishes this process's sightings and listens for the group's."""

    def __init__(
        self,
        postgres_url: str,
        name: str,
        pool: AsyncConnectionPool,
        *,
        seen: Callable[[str, int], None],
        missed: Callable[[], Awaitable[None]],
    ) -> None:
        self._url = postgres_url
        self._channel = channel(name)
        self._pool = pool
        self._seen = seen
        self._missed = missed

    async def publish(self, sightings: list[tuple[str, int]]) -> None:
        """Tell the group (committed when this returns)."""
        if not sightings:
            return
        async with self._pool.connection() as conn:
            for payload in payloads(sightings):
                await conn.execute(
                    "SELECT pg_notify(%s, %s)", (self._channel, payload.decode("utf-8"))
                )

    async def listen(self) -> None:
        """Take the group's sightings until cancelled; after a dropped connection, list the
        streams again (notifications sent meanwhile are lost)."""
        backoff = Backoff(cap=10.0)
        first = True
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(
                    self._url, autocommit=True, application_name=self._channel[:63]
                ) as conn:
                    await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self._channel)))
                    if not first:
                        await self._missed()
                    first = False
                    backoff.reset()
                    async for notification in conn.notifies():
                        self._take(notification.payload)
            except (psycopg.Error, OSError) as exc:
                first = False
                delay = backoff.next_delay()
                log.warning("listening for sightings: %s; again in %.2fs", exc, delay)
                await asyncio.sleep(delay)

    def _take(self, payload: str) -> None:
        try:
            sightings = _decode(payload.encode("utf-8"))
        except msgspec.DecodeError:
            return
        for path, tail in sightings:
            self._seen(path, tail)

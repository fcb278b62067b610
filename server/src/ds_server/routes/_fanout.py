"""One writer per stream for the SSE readers waiting at its tail.

With many subscribers on one stream, waking each reader's task to read,
frame and send the same message cost more than the socket writes
themselves. Readers that are up to date (and sent no ``cursor``) join the
stream's :class:`TailGroup` and sleep; the group reads each change once,
frames it once, and calls every member's ASGI ``send`` in one pass. A
member goes back to serving itself when its keep-alive is due, its
connection's lifetime ends, the stream goes away, or its client stops
reading.

The group never waits for a client. A member whose connection still holds
unsent data when a frame is due (its client is slow, or not reading) is
handed back at once, before anything is written to it, and catches up on
its own from its offset, where waiting for its client delays nobody else.
Writes to every other member are taken by their transports at once, so a
pass over the members never pauses.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from ds_server.live import Wake
from ds_server.stores.errors import StoreError

if TYPE_CHECKING:
    from collections.abc import Callable

    from litestar.types import HTTPResponseBodyEvent, Send

    from ds_server.connection import Connection
    from ds_server.live import IdleWait
    from ds_server.stores.base import ReadResult, Store

    FrameBuilder = Callable[[ReadResult], bytes]

log = logging.getLogger("ds_server")


class Tails:
    """The fan-out groups of a server's streams, by (stream, base64)."""

    __slots__ = ("groups", "read_chunk_bytes", "store")

    def __init__(self, store: Store, read_chunk_bytes: int) -> None:
        self.store = store
        self.read_chunk_bytes = read_chunk_bytes
        self.groups: dict[object, TailGroup] = {}


def join_tail(
    tails: Tails,
    name: str,
    base64_encoded: bool,
    position: int,
    frame: FrameBuilder,
    send: Send,
    connection: Connection,
    idle: IdleWait,
) -> Member | None:
    """Join the stream's group of readers at ``position`` (started if there is none).

    None when the group is elsewhere (ahead of this reader) or sending a
    frame: a reader joining then would be counted past a frame it never got.
    """
    key = (name, base64_encoded)
    group = tails.groups.get(key)
    if group is None or group.ended:
        group = tails.groups[key] = TailGroup(tails, name, position, frame, key)
    if group.position != position or group.delivering:
        return None
    member = Member(group, send, connection, position, idle)
    group.join(member)
    return member


class Member:
    """One SSE reader inside a group: where it is, how to reach it, how to hand it back."""

    __slots__ = ("connection", "done", "group", "idle", "position", "send")

    def __init__(
        self, group: TailGroup, send: Send, connection: Connection, position: int, idle: IdleWait
    ) -> None:
        self.group = group
        self.send = send
        self.connection = connection
        self.position = position
        self.idle = idle
        # Resolved when the reader serves itself again (see Wake).
        self.done: asyncio.Future[Wake] = asyncio.get_running_loop().create_future()

    def hand_back(self, why: Wake) -> None:
        if not self.done.done():
            self.done.set_result(why)

    def leave(self) -> None:
        self.group.leave(self)


class TailGroup:
    """The readers of one stream, in one encoding, at its tail."""

    def __init__(
        self, tails: Tails, name: str, position: int, frame: FrameBuilder, key: object
    ) -> None:
        self._tails = tails
        self._name = name
        self._frame = frame
        self._key = key
        self.position = position
        self._members: dict[Member, None] = {}
        self._waiter: asyncio.Future[Wake] | None = None
        self.ended = False
        self.delivering = False  # a frame is on its way to the members
        self._task = asyncio.ensure_future(self._run())

    def join(self, member: Member) -> None:
        self._members[member] = None

    def leave(self, member: Member) -> None:
        self._members.pop(member, None)
        if not self._members and self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(Wake.EXPIRED)  # nobody left to serve: stop waiting

    async def _run(self) -> None:
        try:
            await self._serve()
        except Exception:
            log.exception("SSE fan-out for %s failed", self._name)
        finally:
            self._end(Wake.CHANGED)

    async def _serve(self) -> None:
        tails = self._tails
        live = tails.store.live
        loop = asyncio.get_running_loop()
        while self._members:
            changed = live.next_change(self._name)
            try:
                result = await tails.store.read(self._name, self.position, tails.read_chunk_bytes)
            except StoreError:
                return  # deleted or expired: each reader finds out on its own
            if not result.chunks and not result.info.closed:
                self._waiter = loop.create_future()
                changed.add(self._waiter)
                try:
                    await self._waiter
                finally:
                    changed.discard(self._waiter)
                    self._waiter = None
                continue
            await self._deliver(self._frame(result), result.next_offset)
            self.position = result.next_offset
            if result.at_closed_end:
                self._end(Wake.CLOSED)
                return

    async def _deliver(self, frame: bytes, next_offset: int) -> None:
        """Send one frame to every member that can take it now, in one pass."""
        message: HTTPResponseBodyEvent = {
            "type": "http.response.body",
            "body": frame,
            "more_body": True,
        }
        now = asyncio.get_running_loop().time()
        self.delivering = True
        try:
            for member in list(self._members):
                if member.done.done():
                    continue  # handed back or gone since the pass began
                connection = member.connection
                if connection.lost:
                    self._release(member, Wake.EXPIRED)  # nobody to read for
                    continue
                if connection.write_blocked:
                    # Behind: it reads and sends on its own from its offset.
                    self._release(member, Wake.CHANGED)
                    continue
                try:
                    # Doesn't wait: a send only waits while writing is blocked.
                    await member.send(message)
                except Exception:
                    self._release(member, Wake.CHANGED)
                    continue
                member.position = next_offset
                member.idle.active(now)
        finally:
            self.delivering = False

    def _release(self, member: Member, why: Wake) -> None:
        self._members.pop(member, None)
        member.hand_back(why)

    def _end(self, why: Wake) -> None:
        if self.ended:
            return
        self.ended = True
        groups = self._tails.groups
        if groups.get(self._key) is self:
            del groups[self._key]
        for member in list(self._members):
            self._release(member, why)

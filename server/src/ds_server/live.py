"""Per-stream wake-ups for long-poll and SSE readers.

Readers check the stream, then wait on the stream's current :class:`Change`;
a change fires it and installs a fresh one. Checking and taking the change
happen without an ``await`` in between, so no change can slip past.
"""

from __future__ import annotations

import asyncio
import enum


class Wake(enum.Enum):
    """Why a reader's wait ended."""

    CHANGED = "changed"  # the stream changed (or a fan-out group handed the reader back)
    KEEPALIVE = "keepalive"  # a keep-alive is due
    EXPIRED = "expired"  # the connection's lifetime is over
    CLOSED = "closed"  # a fan-out group already sent the stream's closing frame


class Change:
    """Fires once, on the next change of one stream, waking every reader waiting on it.

    A lighter ``asyncio.Event``: readers hand in their own future, so a
    long-lived reader can also be woken by its own timer (see :class:`IdleWait`).
    """

    __slots__ = ("_waiters", "fired")

    def __init__(self) -> None:
        self.fired = False
        # Insertion-ordered, so the longest-waiting reader is woken first.
        self._waiters: dict[asyncio.Future[Wake], None] = {}

    def fire(self) -> None:
        self.fired = True
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(Wake.CHANGED)
        self._waiters.clear()

    def add(self, waiter: asyncio.Future[Wake]) -> None:
        """Resolve ``waiter`` with ``Wake.CHANGED`` when this change fires (at once if it has)."""
        if self.fired:
            if not waiter.done():
                waiter.set_result(Wake.CHANGED)
        else:
            self._waiters[waiter] = None

    def discard(self, waiter: asyncio.Future[Wake]) -> None:
        self._waiters.pop(waiter, None)


class LiveNotifier:
    """Wakes every reader of a stream when it changes (append, close, delete)."""

    def __init__(self) -> None:
        self._changes: dict[str, Change] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """Remember the serving loop so other threads can notify through it."""
        self._loop = loop

    def next_change(self, path: str) -> Change:
        """The change that fires on the next change of ``path``."""
        change = self._changes.get(path)
        if change is None:
            change = self._changes[path] = Change()
        return change

    def notify(self, path: str) -> None:
        """Wake all readers of ``path``; call from the event loop's thread."""
        change = self._changes.pop(path, None)
        if change is not None:
            change.fire()

    def notify_threadsafe(self, path: str) -> None:
        """Like :meth:`notify`, from any thread (backends that write off-loop)."""
        if self._loop is None:
            return
        self._loop.call_soon_threadsafe(self.notify, path)

    async def wait(self, change: Change, seconds: float) -> bool:
        """Wait for ``change`` up to ``seconds``; True when it fired."""
        waiter: asyncio.Future[Wake] = asyncio.get_running_loop().create_future()
        change.add(waiter)
        try:
            async with asyncio.timeout(seconds):
                await waiter
                return True
        except TimeoutError:
            return False
        finally:
            change.discard(waiter)


class IdleWait:
    """Waits on a stream's changes for one long-lived reader (an SSE connection).

    It arms two timers for the whole connection, the keep-alive and the
    reconnect deadline, instead of a timeout per wait: with 1,000 SSE
    subscribers, arming and cancelling a timer on every message took a tenth
    of the server's CPU.
    """

    def __init__(self, keepalive_secs: float, lifetime_secs: float | None) -> None:
        self._loop = asyncio.get_running_loop()
        self._keepalive_secs = keepalive_secs
        self._waiter: asyncio.Future[Wake] | None = None
        self._last_active = self._loop.time()
        self.expired = False
        self._tick = self._loop.call_later(keepalive_secs, self._on_tick)
        self._end = (
            None if lifetime_secs is None else self._loop.call_later(lifetime_secs, self._expire)
        )

    def active(self, now: float | None = None) -> None:
        """The reader just sent something; the next keep-alive is due a full period later.

        ``now`` is the loop's time, for callers that mark many readers at once.
        """
        self._last_active = self._loop.time() if now is None else now

    async def wait(self, change: Change) -> Wake:
        """Until ``change`` fires, a keep-alive is due, or the lifetime ends."""
        waiter: asyncio.Future[Wake] = self._loop.create_future()
        change.add(waiter)
        try:
            return await self.wait_for(waiter)
        finally:
            change.discard(waiter)

    async def wait_for(self, waiter: asyncio.Future[Wake]) -> Wake:
        """Until ``waiter`` resolves, a keep-alive is due, or the lifetime ends."""
        if self.expired:
            return Wake.EXPIRED
        self._waiter = waiter
        try:
            return await waiter
        finally:
            self._waiter = None

    def end(self) -> None:
        """End the reader's life now (its connection is gone): waits return ``Wake.EXPIRED``."""
        self._expire()

    def close(self) -> None:
        self._tick.cancel()
        if self._end is not None:
            self._end.cancel()

    def _on_tick(self) -> None:
        due = self._last_active + self._keepalive_secs
        if due > self._loop.time():
            self._tick = self._loop.call_at(due, self._on_tick)
            return
        self._tick = self._loop.call_later(self._keepalive_secs, self._on_tick)
        self._wake(Wake.KEEPALIVE)

    def _expire(self) -> None:
        self.expired = True
        self._wake(Wake.EXPIRED)

    def _wake(self, why: Wake) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(why)

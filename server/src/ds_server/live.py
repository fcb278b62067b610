"""Per-stream wake-ups for long-poll and SSE readers.

Readers check the stream, then wait on the stream's current event; a change
sets that event and installs a fresh one. Checking and taking the event
happen without an ``await`` in between, so no change can slip past.
"""

from __future__ import annotations

import asyncio


class LiveNotifier:
    """Wakes every reader of a stream when it changes (append, close, delete)."""

    def __init__(self) -> None:
        self._events: dict[str, asyncio.Event] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """Remember the serving loop so other threads can notify through it."""
        self._loop = loop

    def changed_event(self, path: str) -> asyncio.Event:
        """The event that fires on the next change of ``path``."""
        event = self._events.get(path)
        if event is None:
            event = self._events[path] = asyncio.Event()
        return event

    def notify(self, path: str) -> None:
        """Wake all readers of ``path``; call from the event loop's thread."""
        event = self._events.pop(path, None)
        if event is not None:
            event.set()

    def notify_threadsafe(self, path: str) -> None:
        """Like :meth:`notify`, from any thread (backends that write off-loop)."""
        if self._loop is None:
            return
        self._loop.call_soon_threadsafe(self.notify, path)

    async def wait(self, event: asyncio.Event, seconds: float) -> bool:
        """Wait for ``event`` up to ``seconds``; True when it fired."""
        try:
            await asyncio.wait_for(event.wait(), seconds)
        except TimeoutError:
            return False
        return True

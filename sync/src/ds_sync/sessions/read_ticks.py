"""Caught-up readers read at the writer's ticks, not at every event.

The writer commits once per tick, so nothing is gained by handing an event
over the moment it arrives. A reader that has caught up is paused (flow
control: the server's bytes wait in the socket) and every held reader is
opened together just before the tick's commit: the events of all streams
are parsed and handed over in one turn of the loop, and the writer is
woken once, not once per event. Measured with ``ds-bench sync``: CPU per
event 25 % lower at 1,000 events/s over 100 streams and 10 to 17 % lower at 100/s
(docs/benchmarks.md). What it does not remove: uvloop (libuv) takes a
paused socket out of its poll set only when data next arrives, so the
first event per stream and tick still wakes the process for a moment.

A tick whose window brings nothing ends the holding (unless the tick has
reads to commit anyway): readers read as events arrive again, so an idle
stream costs no ticks and the first event after a pause is committed at
once. Pausing never drops or reorders anything: it only decides when bytes
are read. A reader whose uncommitted reads reached the limit stays paused
until a commit makes room (``can_open``).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from ds_sync.sessions.stream_state import StreamState


class ReadTicks:
    """The readers held until the next tick's window."""

    def __init__(self, can_open: Callable[[StreamState], bool]) -> None:
        self._can_open = can_open
        self._held: dict[StreamState, None] = {}
        self._deliveries = 0

    @property
    def holding(self) -> bool:
        return bool(self._held)

    def holds(self, state: StreamState) -> bool:
        return state in self._held

    def delivered(self) -> None:
        """A reader handed over a read (the window counts them)."""
        self._deliveries += 1

    def hold(self, state: StreamState) -> None:
        """``state``'s reader has caught up: it reads again at the next window."""
        if state.reader is not None:
            state.reader.pause()
            self._held[state] = None

    async def window(self, *, release_if_quiet: bool) -> None:
        """Open every held reader, let what waits in their sockets be read, and close them
        again; with nothing read and ``release_if_quiet``, release them all (back to reading
        as events arrive)."""
        before = self._deliveries
        self._open()
        # Two turns of the loop: the opened sockets are polled after the first.
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        if self._deliveries == before and release_if_quiet:
            self._held.clear()  # quiet: stop ticking, the readers stay open
            return
        for state in list(self._held):
            if state.reader is None:
                del self._held[state]  # ended meanwhile (idle, stopped, failed)
            else:
                state.reader.pause()

    def _open(self) -> None:
        for state in list(self._held):
            reader = state.reader
            if reader is None:
                del self._held[state]
            elif self._can_open(state):
                reader.resume()

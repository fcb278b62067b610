"""Reading one stream from its checkpoint and committing each read before the next.

Reads go through ``durable_sessions.follow``: SSE (``live=sse``) from the
checkpoint, reconnecting whenever the server ends the connection, with a
long-poll fallback, and a bootstrap when a read answers 410. Every update
it yields is one SSE ``data`` event confirmed by its ``control`` event, so
``next_offset`` is exact and each update is one batch. A reader with
nothing to read for ``idle_secs`` closes its connection: idle streams hold
no connection, and a wake (or a rescan) starts the reader again.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
from typing import TYPE_CHECKING

from durable_sessions import Bootstrapped, follow
from durable_streams import StreamNotFoundError

from ds_sync.model import Batch
from ds_sync.offsets import START, normal

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    import httpx
    from durable_sessions import Event

    from ds_sync.server_api import ServerApi
    from ds_sync.writer import Writer

log = logging.getLogger("ds_sync.tailer")
# A caught-up reader steps aside after this long when other streams wait for a slot.
STEP_ASIDE_SECS = 1.0


class Ending(enum.Enum):
    """Why a reader stopped."""

    IDLE = "idle"  # nothing new for a while: the connection is closed
    CLOSED = "closed"  # the stream is closed and everything is committed
    DELETED = "deleted"  # the stream no longer exists


async def tail(
    api: ServerApi,
    http: httpx.AsyncClient,
    writer: Writer,
    stream: str,
    checkpoint: str,
    *,
    url: str,
    idle_secs: float,
    on_commit: Callable[[str, str], None],
    others_waiting: Callable[[], bool],
) -> Ending:
    """Read ``stream`` from ``checkpoint``, committing batch after batch, until it ends.

    ``url`` is the stream's URL on the surface that serves its bootstrap
    (``/ds/{bucket}/{stream}`` for bucket streams). ``on_commit(stream,
    next_offset)`` runs after each commit. A reader
    caught up for a second steps aside early when ``others_waiting()``.
    Errors from the server or the writer propagate; the caller restarts
    from the checkpoint the database holds.
    """
    position = checkpoint
    events = follow(url, offset=position, client=http, headers=api.headers)
    reads = _Reads(events)
    try:
        while True:
            event = await reads.next(idle_secs, others_waiting)
            if event is None:
                return Ending.IDLE
            batch = _batch(stream, position, event)
            await writer.commit(batch)
            position = batch.next_offset
            on_commit(stream, position)
            if batch.closed:
                return Ending.CLOSED
    except StopAsyncIteration:
        return Ending.CLOSED
    except StreamNotFoundError:
        # A 410 followed by a bootstrap the surface doesn't serve is a 404 too:
        # only a stream that really is gone counts as deleted.
        if await api.head(stream) is not None:
            raise
        return Ending.DELETED
    finally:
        await reads.close()


def _batch(stream: str, position: str, event: Event) -> Batch:
    if not isinstance(event, Bootstrapped):
        return Batch(
            stream=stream,
            start=position,
            next_offset=normal(event.next_offset),
            messages=tuple(event.messages),
            closed=event.closed,
        )
    # A read from the checkpoint answered 410: a snapshot dropped history this
    # stream never synced. It goes on record as a gap; reading goes on from the snapshot.
    state = event.bootstrap
    start = START if state.snapshot_offset == "-1" else normal(state.snapshot_offset)
    log.error(
        "stream %s: history %s..%s was dropped by a snapshot before it was synced (410); "
        "recorded in sync_gaps, continuing from the snapshot",
        stream,
        position,
        start,
    )
    return Batch(
        stream=stream,
        start=start,
        next_offset=normal(state.next_offset),
        messages=tuple(body for _, body in state.messages),
        gap_from=position,
    )


class _Reads:
    """The stream's events, one read in flight at a time, waited for in short steps.

    Cancelling a read would end the generator (and its connection), so a
    read that outlasts a step stays pending and the next step waits on it.
    """

    def __init__(self, events: AsyncIterator[Event]) -> None:
        self._events = events
        self._pending: asyncio.Task[Event] | None = None

    async def next(self, idle_secs: float, others_waiting: Callable[[], bool]) -> Event | None:
        """The next event, or None after ``idle_secs`` without one."""
        idle = 0.0
        while True:
            if self._pending is None:
                self._pending = asyncio.ensure_future(anext(self._events))
            step = min(STEP_ASIDE_SECS, idle_secs - idle)
            done, _ = await asyncio.wait({self._pending}, timeout=step)
            if done:
                read, self._pending = self._pending, None
                return read.result()
            idle += step
            if idle >= idle_secs or others_waiting():
                return None

    async def close(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
            with contextlib.suppress(BaseException):
                await self._pending
        with contextlib.suppress(RuntimeError):
            await self._events.aclose()  # type: ignore[attr-defined]

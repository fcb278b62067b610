"""Reading one stream from an offset, handing over each read without waiting for its commit.

Reads are SSE (``live=sse``) through ``durable_sessions.sse_reader``: one
connection, and a callback on the event loop for every ``control`` event,
so each read has an exact end and costs no task switch. The reader does
not wait for commits: each read goes to ``deliver`` (the stream's chain of
reads, which the writer commits once per tick), and when the chain grows
too long the stream's state pauses the connection until it is committed.

The server ends SSE connections now and then; the reader reconnects from
the end of the last read. A read answered 410 (a snapshot dropped history
this stream never synced) bootstraps with the SDK and hands over one read
that records the gap; where SSE is refused, it long-polls with the SDK's
``follow``. A reader with nothing to read for ``idle_secs`` closes its
connection (idle streams hold none), and one caught up for a second steps
aside when other streams wait for a reader slot.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
from typing import TYPE_CHECKING

from durable_sessions import Bootstrapped, fetch_bootstrap, follow
from durable_sessions.protocol.content_types import JSON
from durable_sessions.protocol.offsets import normal_offset
from durable_sessions.protocol.urls import bootstrap_url
from durable_sessions.sse_reader import SseReader, SseUnavailableError
from durable_streams import RetentionGoneError, StreamNotFoundError

from ds_sync.sessions.model import Read

if TYPE_CHECKING:
    from collections.abc import Callable

    import httpx
    from durable_sessions import Event, Update
    from durable_sessions.async_server import AsyncStreamServer

log = logging.getLogger("ds_sync.tailer")
# A caught-up reader steps aside after this long when other streams wait for a slot.
STEP_ASIDE_SECS = 1.0
# A connection that ended before a single update is not opened again at once.
EMPTY_SESSION_PAUSE_SECS = 0.5
# The server sends a keep-alive every 15 s; silence for this long is a dead connection.
QUIET_TIMEOUT_SECS = 60.0


class Ending(enum.Enum):
    """Why a reader stopped."""

    IDLE = "idle"  # nothing new for a while (or stepped aside): the connection is closed
    CLOSED = "closed"  # the stream is closed and its last read handed over
    DELETED = "deleted"  # the stream no longer exists


class Reader:
    """Follows one stream from ``offset`` until it ends; ``run()`` says why it did."""

    def __init__(
        self,
        api: AsyncStreamServer,
        http: httpx.AsyncClient,
        stream: str,
        offset: str,
        *,
        url: str,
        deliver: Callable[[Read], None],
        idle_secs: float,
        others_waiting: Callable[[], bool],
    ) -> None:
        self.stream = stream
        self.offset = offset  # where the next read begins
        self._api = api
        self._http = http
        self._url = url
        self._deliver = deliver
        self._idle_secs = idle_secs
        self._others_waiting = others_waiting
        self._loop = asyncio.get_running_loop()
        self._last_data = self._loop.time()
        self._idle_timer: asyncio.TimerHandle | None = None
        self._sse: SseReader | None = None
        self._polling: asyncio.Task[None] | None = None
        self._resumed = asyncio.Event()
        self._resumed.set()
        self._stopped = False
        self._closed = False

    async def run(self) -> Ending:
        """Read until the stream ends, goes idle or is deleted; errors propagate (the caller
        starts again from the checkpoint the database holds)."""
        self._arm_idle(STEP_ASIDE_SECS)
        try:
            while not self._stopped and not self._closed:
                try:
                    updates = await self._connection()
                except RetentionGoneError:
                    await self._bootstrap()
                    continue
                except StreamNotFoundError:
                    # A 410 followed by a bootstrap the surface doesn't serve is a 404 too:
                    # only a stream that really is gone counts as deleted.
                    if await self._api.head(self.stream) is not None:
                        raise
                    return Ending.DELETED
                except SseUnavailableError as exc:
                    log.info("stream %s: SSE refused (%s); long-polling", self.stream, exc)
                    await self._long_poll()
                    continue
                if updates == 0 and not self._stopped and not self._closed:
                    await asyncio.sleep(EMPTY_SESSION_PAUSE_SECS)
            return Ending.CLOSED if self._closed else Ending.IDLE
        finally:
            if self._idle_timer is not None:
                self._idle_timer.cancel()

    def stop(self) -> None:
        """Close the connection: ``run()`` returns ``IDLE`` (what was handed over stands)."""
        self._stopped = True
        if self._sse is not None:
            self._sse.close()
        if self._polling is not None:
            self._polling.cancel()
        self._resumed.set()

    def pause(self) -> None:
        """Take no more data until ``resume()`` (the stream's uncommitted reads are many)."""
        self._resumed.clear()
        if self._sse is not None:
            self._sse.pause()

    def resume(self) -> None:
        self._resumed.set()
        if self._sse is not None:
            self._sse.resume()

    async def _connection(self) -> int:
        """One SSE connection from ``offset``; the updates it brought."""
        sse = SseReader(
            self._url,
            self.offset,
            self._update,
            headers=await self._api.auth_headers(),
            content_type=JSON,
            quiet_timeout_secs=QUIET_TIMEOUT_SECS,
        )
        if not self._resumed.is_set():
            sse.pause()
        self._sse = sse
        try:
            await sse.read()
        finally:
            self._sse = None
        return sse.updates

    def _update(self, update: Update) -> None:
        """An SSE update: one read (an update without data moves nothing)."""
        if not update.messages and not update.closed:
            return
        self._closed = update.closed
        self._handover(
            Read(
                self.offset,
                normal_offset(update.next_offset),
                update.messages,
                update.closed,
                caught_up=update.up_to_date,
            )
        )

    def _handover(self, read: Read) -> None:
        self._last_data = self._loop.time()
        self.offset = read.next_offset
        self._deliver(read)

    async def _bootstrap(self) -> None:
        """After a 410: the snapshot's messages, as one read that records the gap."""
        state = await fetch_bootstrap(
            bootstrap_url(self._url), client=self._http, headers=await self._api.auth_headers()
        )
        start = normal_offset(state.snapshot_offset)  # "-1" (none): the start
        log.error(
            "stream %s: history %s..%s was dropped by a snapshot before it was synced (410); "
            "recorded in sync_gaps, continuing from the snapshot",
            self.stream,
            self.offset,
            start,
        )
        gap_from = self.offset
        self.offset = start
        self._handover(
            Read(
                start,
                normal_offset(state.next_offset),
                [body for _, body in state.messages],
                gap_from=gap_from,
            )
        )

    async def _long_poll(self) -> None:
        """Read with the SDK's long-poll ``follow`` until stopped, closed or failed."""
        self._polling = asyncio.ensure_future(self._poll())
        try:
            await self._polling
        except asyncio.CancelledError:
            if not self._stopped:
                raise
        finally:
            self._polling = None

    async def _poll(self) -> None:
        events = follow(
            self._url,
            offset=self.offset,
            live="long-poll",
            client=self._http,
            headers=await self._api.auth_headers(),
        )
        try:
            async for event in events:
                self._poll_event(event)
                if self._closed:
                    return
                await self._resumed.wait()
        finally:
            with contextlib.suppress(RuntimeError):
                await events.aclose()

    def _poll_event(self, event: Event) -> None:
        if isinstance(event, Bootstrapped):  # follow() met a 410 and bootstrapped
            state = event.bootstrap
            start = normal_offset(state.snapshot_offset)  # "-1" (none): the start
            gap_from = self.offset
            self.offset = start
            messages = [body for _, body in state.messages]
            self._handover(
                Read(start, normal_offset(state.next_offset), messages, gap_from=gap_from)
            )
            return
        self._closed = event.closed
        if event.messages or event.closed:
            self._handover(
                Read(self.offset, normal_offset(event.next_offset), event.messages, event.closed)
            )

    def _arm_idle(self, delay: float) -> None:
        self._idle_timer = self._loop.call_later(delay, self._check_idle)

    def _check_idle(self) -> None:
        """Close the connection after ``idle_secs`` without data, or after a second of it
        when other streams wait for a reader slot."""
        self._idle_timer = None
        if self._stopped:
            return
        quiet = self._loop.time() - self._last_data
        if quiet >= self._idle_secs or (quiet >= STEP_ASIDE_SECS and self._others_waiting()):
            self.stop()
            return
        if quiet < STEP_ASIDE_SECS:
            self._arm_idle(STEP_ASIDE_SECS - quiet)
        else:
            self._arm_idle(min(STEP_ASIDE_SECS, self._idle_secs - quiet))

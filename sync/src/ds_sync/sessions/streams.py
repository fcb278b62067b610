"""The synced streams: which exist, where each stands, and which have a reader running.

Discovery (listings, HEADs) and wakes report what they see with
``observe``; this module decides. A stream gets a reader when it has data
past what was read (or was closed); a reader that ends idle is started
again at once if data arrived meanwhile. Readers hand their reads to the
stream's state and the writer commits them; its verdict comes back to
``_settled``: the checkpoint moves, or the stream's reads are dropped and
it is read again from the checkpoint the database holds. Everything here
runs on the event loop, so the decisions never race each other.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

import httpx
import psycopg
from durable_sessions.protocol.listing import StreamInfo
from durable_sessions.protocol.offsets import parse_offset
from durable_sessions.protocol.patterns import any_matches
from durable_streams import DurableStreamError

from ds_sync.sessions import checkpoints
from ds_sync.sessions.model import Status
from ds_sync.sessions.read_ticks import ReadTicks
from ds_sync.sessions.shards import AllStreams, shard_of
from ds_sync.sessions.stream_state import StreamState
from ds_sync.sessions.tailer import Ending, Reader
from ds_sync.sessions.writer import StaleCheckpoint, UniqueConflict, Writer

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Coroutine
    from typing import Any

    from durable_sessions.async_server import AsyncStreamServer
    from psycopg_pool import AsyncConnectionPool

    from ds_sync.metrics import Metrics
    from ds_sync.sessions.checkpoints import Checkpoint
    from ds_sync.sessions.model import Read
    from ds_sync.sessions.options import ReaderOptions
    from ds_sync.sessions.shards import Ownership
    from ds_sync.sessions.stream_state import Chain

log = logging.getLogger("ds_sync.streams")
# Streams first seen at once (a HEAD, then their checkpoint row). A burst of
# new streams (1,000 sessions created together) otherwise queues a thousand
# requests on the HTTP pool, whose bookkeeping grows with the queue squared,
# and as many on the database pool: the event loop starves and both time out.
_SIGHTINGS = 16
# ds-sync's own streams (wakes, leases) live in this bucket; they are never synced.
_GROUP_BUCKET = "ds-sync/"


class Streams:
    """Starts, restarts and retires a reader per stream."""

    def __init__(
        self,
        options: ReaderOptions,
        api: AsyncStreamServer,
        http: httpx.AsyncClient,
        pool: AsyncConnectionPool,
        metrics: Metrics,
        ownership: Ownership | None = None,
    ) -> None:
        self._options = options
        self._api = api
        self._http = http
        self._pool = pool
        self._metrics = metrics
        self.ownership: Ownership = ownership or AllStreams()
        # A stream's reads not yet committed, beyond which its reader pauses.
        self._queue_limit = options.max_batch_rows
        self.ticks = ReadTicks(can_open=lambda state: state.queued_rows < self._queue_limit)
        self.writer = Writer(
            pool,
            metrics,
            max_rows=options.max_batch_rows,
            interval=options.commit_interval_secs,
            settle=self._settled,
            owns=lambda state: self.ownership.owns(state.path),
            ticks=self.ticks,
        )
        self._states: dict[str, StreamState] = {}
        self._pending: dict[str, asyncio.Task[None]] = {}  # first sights being recorded
        self._reported: set[str] = set()  # problems already logged once
        self._stopping = False
        # Readers with a connection open; the rest wait their turn without one.
        self._slots = asyncio.Semaphore(options.max_readers)
        self._sightings = asyncio.Semaphore(_SIGHTINGS)
        # Tails reported for streams of other processes' shards that have no state here.
        self._others_tails: dict[str, int] = {}
        self._gained: set[int] = set()  # shards taken over, not yet read from
        # Gained after the start-up listing, so a listing of their own is due.
        self._gained_since_listing = False
        self._taking: set[int] = set()  # shards whose checkpoints are being loaded
        self.rescan: Callable[[], Awaitable[None]] | None = None

    def _others_waiting(self) -> bool:
        """Whether streams are waiting for a reader slot (a caught-up reader then steps aside)."""
        return self._slots.locked()

    def load(self, rows: dict[str, Checkpoint]) -> None:
        """Start from what the checkpoint table holds."""
        for row in rows.values():
            self._states[row.stream] = StreamState(
                row.stream, row.status, row.next_offset, row.created_ms
            )
        self._count_states()

    def known(self, path: str) -> StreamState | None:
        return self._states.get(path)

    def paths(self) -> list[str]:
        return list(self._states)

    def observe(self, info: StreamInfo) -> bool:
        """The server reports ``info`` about a stream (from a listing, a HEAD or a wake);
        True when that starts a reader (or a first sight that may), or is a stream never
        seen before; False when it was known."""
        if self._stopping or not any_matches(self._options.patterns, info.path):
            return False
        if info.path.startswith(_GROUP_BUCKET):
            return False  # ds-sync's own wake and lease streams
        if info.content_type is not None and not info.is_json:
            if info.path not in self._metrics.skipped_streams:
                self._metrics.skipped_streams.add(info.path)
                log.warning("stream %s is %s, not JSON: not synced", info.path, info.content_type)
            return False
        state = self._states.get(info.path)
        owned = self.ownership.owns(info.path)
        if state is None:
            if not owned:
                # Another process's shard: its owner records and reads it. Kept here in case
                # this process takes the shard over.
                known = self._others_tails.get(info.path)
                self._others_tails[info.path] = max(known or 0, info.tail)
                return known is None
            if info.content_type is None:
                # Seen in a wake: learn its content type before deciding.
                self._spawn_pending(info.path, self._head_then_observe(info.path))
            else:
                self._spawn_pending(info.path, self._first_sight(info))
            return True
        if self._recreated(state, info, owned=owned):
            return False
        state.known_tail = max(state.known_tail, info.tail)
        state.closed_seen = state.closed_seen or info.closed
        if state.behind_since is None and state.behind:
            state.behind_since = time.monotonic()
        if not owned:
            log.debug("stream %s: tail %d seen while its shard is not ours", info.path, info.tail)
        if (
            owned
            and state.status is Status.ACTIVE
            and state.task is None
            and state.unread
            and not state.recovering
        ):
            self._start_reader(state)
            return True
        return False

    def shards_lost(self, shards: set[int]) -> None:
        """Another process holds these shards now: stop reading their streams and drop
        what was read of them and not committed."""
        for state in self._in_shards(shards):
            self._stop_reading(state)
            state.recovering = False

    def shards_resumed(self, shards: set[int]) -> None:
        """These shards were ours all along, but their leases were renewed only after their
        local deadlines: meanwhile wakes of their streams started no reader and reads of
        them were dropped. Read what is known to be unread (the checkpoints in memory are
        right: nobody else held the shards)."""
        for state in self._in_shards(shards):
            if (
                state.status is Status.ACTIVE
                and state.task is None
                and state.unread
                and not state.recovering
            ):
                self._start_reader(state)
        for path, tail in list(self._others_tails.items()):
            if self._shard(path) in shards:
                del self._others_tails[path]
                self.observe(StreamInfo(path=path, content_type=None, tail=tail))

    def shards_gained(self, shards: set[int]) -> None:
        """This process holds these shards now: read their streams from the checkpoints
        their previous holder committed."""
        self._gained |= shards
        # Shards taken before the start-up listing (rescan still unset) are in that listing;
        # the take-over task may run after it, on a busy machine, and must not list again.
        self._gained_since_listing |= self.rescan is not None
        self._spawn_pending("take over", self._take_over())

    async def _take_over(self) -> None:
        # Claims come in a row: those made while one is taken over are taken over next.
        while self._gained:
            shards, self._gained = self._gained, set()
            self._taking |= shards
            try:
                await self._take_over_shards(shards)
            finally:
                self._taking -= shards
            for state in self._in_shards(shards):
                if state.status is Status.ACTIVE and state.task is None and state.unread:
                    self._start_reader(state)
            if self.rescan is not None and self._gained_since_listing:
                # Tails nobody reported here (the previous holder's own wakes): a listing.
                self._gained_since_listing = False
                await self.rescan()

    async def _take_over_shards(self, shards: set[int]) -> None:
        try:
            rows = await checkpoints.load_all(self._pool)
        except psycopg.Error as exc:
            log.warning("taking over shards %s: %s; the next rescan retries", sorted(shards), exc)
            return
        for path, row in rows.items():
            if self._shard(path) not in shards:
                continue
            state = self._states.get(path)
            if state is None:
                state = StreamState(row.stream, row.status, row.next_offset, row.created_ms)
                self._states[path] = state
            elif state.task is None and state.committing is None:
                state.next_offset, state.status = row.next_offset, row.status
                state.drop_reads()
            state.known_tail = max(state.known_tail, self._others_tails.pop(path, -1))
        for path, tail in list(self._others_tails.items()):
            if self._shard(path) in shards:
                del self._others_tails[path]
                self.observe(StreamInfo(path=path, content_type=None, tail=tail))
        self._count_states()

    def _in_shards(self, shards: set[int]) -> list[StreamState]:
        return [s for s in self._states.values() if self._shard(s.path) in shards]

    def _shard(self, path: str) -> int:
        return shard_of(path, self.ownership.shards)

    async def confirm_gone(self, path: str) -> None:
        """A listing no longer shows ``path``: mark it deleted once a HEAD agrees."""
        state = self._states.get(path)
        if state is None or state.status is not Status.ACTIVE or state.task is not None:
            return
        if not self.ownership.owns(path):
            return
        if await self._api.head(path) is None:
            await self._retire(state, Status.DELETED, "the stream no longer exists")

    async def stop(self) -> None:
        """Cancel every reader, then let the writer finish the transaction in progress."""
        self._stopping = True
        tasks = [s.task for s in self._states.values() if s.task is not None]
        tasks += list(self._pending.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.writer.stop()

    def _recreated(self, state: StreamState, info: StreamInfo, *, owned: bool) -> bool:
        """Whether the stream was deleted and made again under its name (then: not synced)."""
        if info.created_ms is None:
            return False
        if state.created_ms is None and state.status is Status.ACTIVE:
            state.created_ms = info.created_ms
            self._spawn_pending(
                "created:" + state.path,
                checkpoints.set_created(self._pool, state.path, info.created_ms),
            )
            return False
        if state.created_ms == info.created_ms and state.status is not Status.DELETED:
            return False
        if not owned:
            return True  # its owner says so and marks it
        if state.status is Status.ACTIVE and state.task is None:
            detail = "deleted and created again: its offsets would collide with the rows stored"
            self._spawn_pending("failed:" + state.path, self._retire(state, Status.FAILED, detail))
        elif state.path not in self._reported:
            self._reported.add(state.path)
            log.error(
                "stream %s exists again after it was %s: not synced (its offsets would "
                "collide with the rows already stored for that name)",
                state.path,
                state.status.value,
            )
        return True

    def _spawn_pending(self, key: str, work: Coroutine[Any, Any, None]) -> None:
        running = self._pending.get(key)
        # A finished task stays listed until its done callback runs (on a later loop turn):
        # work handed in meanwhile (a shard gained) must not be dropped for it.
        if running is not None and not running.done():
            work.close()
            return
        task = asyncio.create_task(work, name=f"sight {key}")
        self._pending[key] = task

        def forget(done: asyncio.Task[None]) -> None:
            if self._pending.get(key) is done:
                del self._pending[key]

        task.add_done_callback(forget)

    async def _head_then_observe(self, path: str) -> None:
        try:
            async with self._sightings:
                info = await self._api.head(path)
        except (httpx.HTTPError, DurableStreamError) as exc:
            log.warning("HEAD %s failed (%s); the next wake or rescan retries", path, exc)
            return
        if info is not None:
            self._pending.pop(path, None)
            self.observe(info)

    async def _first_sight(self, info: StreamInfo) -> None:
        try:
            async with self._sightings:
                row = await checkpoints.first_sight(self._pool, info.path, info.created_ms)
        except psycopg.Error as exc:
            log.warning(
                "recording stream %s failed (%s); the next wake or rescan retries", info.path, exc
            )
            return
        self._states[info.path] = StreamState(
            row.stream, row.status, row.next_offset, row.created_ms
        )
        self._pending.pop(info.path, None)
        self._count_states()
        self.observe(info)

    def _start_reader(self, state: StreamState) -> None:
        if not self.ownership.owns(state.path):
            return
        if (self._gained or self._taking) and self._shard(state.path) in (
            self._gained | self._taking
        ):
            return  # its checkpoint is being loaded; reading starts from it after

        log.debug("stream %s: reading from %s", state.path, state.read_offset)
        state.task = asyncio.create_task(self._read(state), name=f"read {state.path}")

    async def _read(self, state: StreamState) -> None:
        ending: Ending | None = None
        try:
            async with self._slots:
                state.reader = Reader(
                    self._api,
                    self._http,
                    state.path,
                    state.read_offset,
                    url=self._read_url(state.path),
                    deliver=lambda read: self._queue(state, read),
                    idle_secs=self._options.idle_secs,
                    others_waiting=self._others_waiting,
                )
                ending = await state.reader.run()
        except Exception as exc:
            # Server and network errors, or a bug: none is the last word on a
            # stream, so back off and read again from the committed checkpoint.
            state.recovering = True
            self._spawn_pending("recover:" + state.path, self._recover(state, exc))
            return
        finally:
            state.reader = None
            state.task = None
        log.debug("stream %s: reader ended (%s) at %s", state.path, ending, state.read_offset)
        if ending is Ending.DELETED:
            await self._retire(state, Status.DELETED, "the stream no longer exists")
        elif ending is Ending.IDLE and state.unread and not self._stopping:
            # Data arrived while the reader was deciding it was idle.
            self._start_reader(state)

    def _queue(self, state: StreamState, read: Read) -> None:
        """A reader handed over a read: queue it for the writer; pause at the limit."""
        if state.recovering:
            return
        if not self.ownership.owns(state.path):
            self._stop_reading(state)  # its shard is no longer ours
            state.recovering = False
            return
        state.queue(read)
        self.ticks.delivered()
        self.writer.submit(state)
        if state.reader is None:
            return
        if state.queued_rows >= self._queue_limit:
            state.reader.pause()
        elif read.caught_up:
            self.ticks.hold(state)  # live: it reads again just before the next commit

    def _settled(self, chain: Chain, error: BaseException | None) -> None:
        """The writer's verdict on a chain of reads."""
        state = chain.state
        if not chain.settled.done():
            chain.settled.set_result(None)
        if error is None:
            state.committed(chain)
            if (
                state.reader is not None
                and state.queued_rows < self._queue_limit
                and not self.ticks.holds(state)
            ):
                state.reader.resume()
            if chain.closed:
                self._count_states()
                log.info("stream %s is closed and fully synced", state.path)
            return
        state.committing = None
        if isinstance(error, StaleCheckpoint):
            self._metrics.stale_commits += 1
        if isinstance(error, UniqueConflict):
            self._metrics.conflicts += 1
            log.error(
                "stream %s: rows at offset %s exist already (%s); the stream is stopped, "
                "nothing was skipped",
                state.path,
                chain.begins_at,
                error,
            )
            self._stop_reading(state)
            self._spawn_pending(
                "failed:" + state.path,
                self._retire(state, Status.FAILED, f"unique key conflict at {chain.begins_at}"),
            )
            return
        self._stop_reading(state)
        self._spawn_pending("recover:" + state.path, self._recover(state, error))

    def _stop_reading(self, state: StreamState) -> None:
        """Stop the reader and drop what it read past the checkpoint."""
        state.recovering = True
        if state.task is not None:
            state.task.cancel()
        state.drop_reads()

    async def _recover(self, state: StreamState, exc: BaseException) -> None:
        """After a failure: wait (backoff with jitter), reload the checkpoint, read again."""
        state.recovering = True
        state.drop_reads()
        self._metrics.retries += 1
        if isinstance(exc, psycopg.Error):
            self._metrics.database_errors += 1
        elif not isinstance(exc, StaleCheckpoint):
            self._metrics.server_errors += 1
        delay = state.backoff.next_delay()
        log.warning(
            "stream %s: %s: %s; retrying in %.2fs", state.path, type(exc).__name__, exc, delay
        )
        await asyncio.sleep(delay)
        # The reader may still be winding down, and a transaction of it be open.
        if state.task is not None and state.task is not asyncio.current_task():
            await asyncio.gather(state.task, return_exceptions=True)
        if state.committing is not None:
            await asyncio.shield(state.committing.settled)
        if self._stopping:
            return
        try:
            row = await checkpoints.load(self._pool, state.path)
        except psycopg.Error:
            row = None
        if row is not None:
            state.next_offset, state.status = row.next_offset, row.status
        state.drop_reads()
        state.recovering = False
        if not self._stopping and state.status is Status.ACTIVE and state.task is None:
            # The server may have more than we were told; reading finds out.
            state.known_tail = max(state.known_tail, parse_offset(state.next_offset) + 1)
            self._start_reader(state)

    async def _retire(self, state: StreamState, status: Status, detail: str) -> None:
        state.status = status
        self._count_states()
        try:
            await checkpoints.set_status(self._pool, state.path, status, detail)
        except psycopg.Error as exc:
            log.warning("recording %s as %s failed (%s)", state.path, status.value, exc)
        log.info("stream %s: %s (%s)", state.path, status.value, detail)

    def _read_url(self, path: str) -> str:
        """The /ds URL for streams of a listed bucket (it serves /bootstrap after a 410)."""
        bucket, _, rest = path.partition("/")
        if rest and "/" not in rest and any(p.bucket == bucket for p in self._options.patterns):
            return self._api.bucket_stream_url(path)
        return self._api.stream_url(path)

    def refresh_metrics(self) -> None:
        """Recount the streams by state, and the ages of checkpoints behind, for /metrics."""
        self._count_states()
        now = time.monotonic()
        self._metrics.checkpoint_ages = {
            state.path: now - state.behind_since
            for state in self._states.values()
            if state.behind_since is not None and state.status is Status.ACTIVE and state.behind
        }

    def _count_states(self) -> None:
        counts: dict[str, int] = {}
        for state in self._states.values():
            key = state.status.value
            counts[key] = counts.get(key, 0) + 1
        counts["reading"] = sum(1 for s in self._states.values() if s.task is not None)
        self._metrics.streams_by_state = counts

"""One mirrored table: its feed's batches POSTed to ``pg-{table}``, exactly once.

The loop: load the table's state; deliver a batch left in the outbox by
an earlier process; then for each batch the feed gives, encode it, stage it
(bodies and next position, one transaction), POST the bodies, commit (the
position moves with the seq), and tell the feed. Whatever moment the
process dies at, the next one finds either nothing staged (the feed
resumes after the last committed batch) or the staged batch, which it
sends again unchanged: the server keeps each body once, however the feed
would cut its batches after the restart.

A ``snapshot-start`` sent to a stream that already has messages is
preceded by a ``reset``, so readers drop what they built from them.
Between batches, and when it starts, the mirror compacts the stream once
it has grown enough (``compaction``): the table's state becomes the
stream's snapshot, and the history before it is released.

Errors: a table that can't be mirrored as it is (no primary key, missing,
stream closed) is marked ``failed`` with the reason, logged once, and tried
again every ``REFUSED_RETRY_SECS``; a fenced producer stops the table;
anything else is retried with backoff from the stored state.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
from typing import TYPE_CHECKING

import psycopg
from durable_sessions.async_server import UnexpectedStatusError

from ds_sync import failpoints
from ds_sync.backoff import Backoff
from ds_sync.mirror.catalog import table_shape
from ds_sync.mirror.compaction import Compactor
from ds_sync.mirror.feed import FeedContext, feed_class
from ds_sync.mirror.messages import bodies, encode_item
from ds_sync.mirror.model import Control, TableRefused
from ds_sync.mirror.producer import Fenced, ProducerLost, post, producer_id
from ds_sync.mirror.state import StaleMirror

if TYPE_CHECKING:
    import httpx
    from durable_sessions.async_server import AsyncStreamServer
    from durable_sessions.protocol.listing import StreamInfo
    from psycopg import AsyncConnection
    from psycopg.rows import TupleRow

    from ds_sync.metrics import TableMetrics
    from ds_sync.mirror.feed import ChangeFeed
    from ds_sync.mirror.model import FeedBatch, Item
    from ds_sync.mirror.options import MirrorOptions
    from ds_sync.mirror.state import MirrorState, MirrorStore
    from ds_sync.table_names import TableName

log = logging.getLogger("ds_sync.mirror")

REFUSED_RETRY_SECS = 30.0
# Failures in a row after which the table's row shows the error (it is still retried).
FAILING_AFTER_ATTEMPTS = 5
# Session settings of the table's own connection: values print as Electric prints them;
# and Postgres probes an idle connection after 5 s, so a holder whose machine vanished
# (no FIN) loses the table's lock to a standby within about 11 s.
SESSION_SETTINGS = (
    "SET TimeZone = 'UTC'; SET DateStyle = 'ISO, DMY'; SET IntervalStyle = 'iso_8601'; "
    "SET bytea_output = 'hex'; SET extra_float_digits = 1; "
    "SET tcp_keepalives_idle = 5; SET tcp_keepalives_interval = 2; SET tcp_keepalives_count = 3"
)
# A standby's backend waits for the lock without reading its socket: without this, one
# whose process was killed stays queued (a ghost standby) until it is granted the lock.
# Not every platform's Postgres has the check; there the ghost goes when granted.
CLIENT_CHECK = "SET client_connection_check_interval = 2000"


class TableMirror:
    """Runs one table's sync until cancelled."""

    def __init__(
        self,
        table: TableName,
        options: MirrorOptions,
        api: AsyncStreamServer,
        http: httpx.AsyncClient,
        store: MirrorStore,
        metrics: TableMetrics,
    ) -> None:
        self.table = table
        self._options = options
        self._api = api
        self._http = http
        self._store = store
        self._metrics = metrics
        self._feed_name = options.feed
        self._stream_has_data = False
        self._reported: str | None = None
        self._compactor: Compactor | None = None

    async def run(self) -> None:
        """Sync, recover, retry; returns only when the table is fenced off."""
        backoff = Backoff(cap=30.0)
        while True:
            try:
                await self._sync()
            except TableRefused as exc:
                await self._refused(str(exc))
                await asyncio.sleep(REFUSED_RETRY_SECS)
            except Fenced as exc:
                self._metrics.state = "stopped"
                detail = f"fenced: {exc}; another ds-sync mirrors this table now"
                log.error("table %s: %s; stopped", self.table.text, detail)
                await self._set_status("failed", detail)
                return
            except Exception as exc:  # the database, the server, the feed: retried
                self._metrics.errors += 1
                delay = backoff.next_delay()
                problem = f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"
                log.warning("table %s: %s; retrying in %.2fs", self.table.text, problem, delay)
                if backoff.attempts >= FAILING_AFTER_ATTEMPTS:
                    # Still retried; the row says so until a batch goes through again.
                    await self._set_status("failed", f"{problem} (retrying)")
                await asyncio.sleep(delay)
            else:
                backoff.reset()

    async def _sync(self) -> None:
        async with await self._connect() as conn:
            await self._lock(conn)
            state = await self._store.load(
                self.table, self._feed_name, producer_id(self.table.qualified)
            )
            await self._store.set_active(self.table.qualified, self._options.instance)
            shape = await table_shape(conn, self.table)
            info = await self._ensure_stream()
            self._compactor = Compactor(
                self._api,
                self.table.stream,
                self.table.qualified,
                self._store,
                self._metrics,
                after_bytes=self._options.compact_after_bytes,
            )
            await self._compactor.restore(state.snapshot, info)
            # Before anything is sent: a stream refusing appends (413) is freed first.
            await self._compactor.run_if_due(info)
            try:
                state = await self._recover(state)
            except ProducerLost as exc:
                await self._start_over(str(exc), state)
                return
            if state.feed != self._feed_name:
                log.warning(
                    "table %s: its feed was %s, now %s: syncing it from scratch",
                    self.table.text,
                    state.feed,
                    self._feed_name,
                )
                state = await self._store.start_over(state, self._feed_name)
            feed = feed_class(self._feed_name)(
                FeedContext(
                    self.table, shape, self._options.feed_options, conn, self._http, self._metrics
                )
            )
            try:
                await self._follow(feed, state)
            finally:
                await feed.close()

    async def _recover(self, state: MirrorState) -> MirrorState:
        """Deliver the batch an earlier process staged, exactly as it was."""
        if not state.outbox:
            return state
        log.info(
            "table %s: sending again the %d bodies of the batch a stopped ds-sync left",
            self.table.text,
            len(state.outbox),
        )
        return await self._deliver(state, resent=True)

    async def _follow(self, feed: ChangeFeed, state: MirrorState) -> None:
        await feed.start(state.position)
        self._reported = None
        while True:
            batch = await feed.next_batch()
            if not batch.items:
                state = await self._store.move(state, batch.position)
            else:
                messages = [encode_item(self.table.text, item) for item in self._items(batch)]
                staged = await self._store.stage(
                    state, bodies(messages, self._options.post_max_bytes), batch.position
                )
                failpoints.reached("mirror.staged")
                try:
                    state = await self._deliver(staged, resent=False)
                except ProducerLost as exc:
                    await self._start_over(str(exc), staged)
                    return
                self._count(batch)
                failpoints.reached("mirror.committed")
                if self._compactor is not None:
                    await self._compactor.run_if_due()
            await feed.delivered(batch.position)

    def _items(self, batch: FeedBatch) -> list[Item]:
        """The batch's items, a reset before a snapshot sent to a stream with messages."""
        items: list[Item] = []
        for item in batch.items:
            if item is Control.SNAPSHOT_START:
                if self._stream_has_data:
                    items.append(Control.RESET)
                self._metrics.state = "snapshot"
            elif item is Control.SNAPSHOT_END:
                self._metrics.state = "streaming"
            items.append(item)
        return items

    async def _deliver(self, state: MirrorState, *, resent: bool) -> MirrorState:
        for seq, body in state.outbox:
            appended = await post(
                self._api,
                self.table.stream,
                state.producer_id,
                state.epoch,
                seq,
                body,
                resent=resent,
                metrics=self._metrics,
            )
            self._stream_has_data = self._stream_has_data or appended
            if self._compactor is not None:
                self._compactor.posted(len(body))
            failpoints.reached("mirror.posted-body")
        failpoints.reached("mirror.posted")
        return await self._store.commit(state)

    async def _start_over(self, reason: str, ours: MirrorState) -> None:
        """A new epoch from seq 0, no position: the next start syncs the table from scratch.

        Unless the stored state moved past ``ours``: then another process (one that took
        over from a standby) sent those seqs, and nothing was lost; this one reloads.
        """
        state = await self._store.load(
            self.table, self._feed_name, producer_id(self.table.qualified)
        )
        if (state.epoch, state.next_seq) != (ours.epoch, ours.next_seq):
            raise StaleMirror(f"{self.table.qualified}: moved on by another ds-sync ({reason})")
        log.error("table %s: %s; syncing it again from scratch", self.table.text, reason)
        self._metrics.resyncs += 1
        await self._store.start_over(state, self._feed_name)

    def _count(self, batch: FeedBatch) -> None:
        changes = sum(1 for item in batch.items if not isinstance(item, Control))
        self._metrics.changes += changes
        self._metrics.batches += 1
        if batch.committed_at is not None:
            self._metrics.delivered_lag(time.time() - batch.committed_at)

    async def _ensure_stream(self) -> StreamInfo:
        """Create the stream when missing; learn whether it holds messages."""
        stream = self.table.stream
        try:
            await self._api.create_json_stream(stream)
        except UnexpectedStatusError as exc:
            if exc.status == 409:
                raise TableRefused(f"stream {stream} exists and is not a JSON stream") from None
            raise
        info = await self._api.head(stream)
        if info is None:
            raise UnexpectedStatusError(f"HEAD {stream}", 404, "created, then gone")
        if info.closed:
            raise TableRefused(f"stream {stream} is closed: nothing more can be appended")
        self._stream_has_data = info.tail > 0
        return info

    async def _connect(self) -> AsyncConnection[TupleRow]:
        conn = await psycopg.AsyncConnection.connect(
            self._options.postgres_url,
            autocommit=True,
            application_name=f"ds-sync {self._options.instance} {self.table.text}"[:63],
        )
        await conn.execute(SESSION_SETTINGS)
        try:
            await conn.execute(CLIENT_CHECK)
        except psycopg.Error as exc:
            log.info("table %s: no client connection check (%s)", self.table.text, exc)
        return conn

    async def _lock(self, conn: AsyncConnection[TupleRow]) -> None:
        """One ds-sync mirrors a table: the holder of its advisory lock (a session lock). The
        others are standbys: each waits for the lock inside Postgres (no polling) and gets
        it the moment the holder's connection ends (a killed process's at once)."""
        key = _lock_key(self.table.qualified)
        await self._store.register(
            self.table, self._feed_name, producer_id(self.table.qualified), key
        )
        cursor = await conn.execute("SELECT pg_try_advisory_lock(%s)", (key,))
        row = await cursor.fetchone()
        if row is not None and row[0]:
            self._metrics.active = True
            return
        self._metrics.state = "standby"
        self._metrics.active = False
        holder = await self._store.active_instance(self.table.qualified)
        log.info(
            "table %s: standby (%s mirrors it); waiting to take over",
            self.table.text,
            holder or "another ds-sync",
        )
        waited = time.monotonic()
        await conn.execute("SELECT pg_advisory_lock(%s)", (key,))
        self._metrics.active = True
        self._metrics.takeovers += 1
        self._metrics.state = "starting"
        log.warning(
            "table %s: taking over from %s (standby for %.1fs)",
            self.table.text,
            holder or "the previous ds-sync",
            time.monotonic() - waited,
        )

    async def _refused(self, detail: str) -> None:
        self._metrics.state = "refused"
        if detail != self._reported:
            self._reported = detail
            log.error("table %s is not mirrored: %s", self.table.text, detail)
        await self._set_status("failed", detail)

    async def _set_status(self, status: str, detail: str | None) -> None:
        with contextlib.suppress(psycopg.Error):
            await self._store.set_status(self.table.qualified, status, detail)


def _lock_key(table: str) -> int:
    """pg_advisory_lock key of a table's mirror: a stable 63-bit number."""
    digest = hashlib.sha256(f"ds-sync mirror {table}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1

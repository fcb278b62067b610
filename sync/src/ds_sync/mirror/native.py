"""The native feed: Postgres's own logical decoding, read through a replication slot.

psycopg 3 has no replication protocol, so the slot is read with the SQL
functions: ``pg_logical_slot_peek_binary_changes`` with the ``pgoutput``
plugin (built in; a publication limits it to the table), then
``pg_replication_slot_advance`` once a batch is stored. A peek never
consumes anything: until ds-sync has stored a position, the slot still
holds what comes after it, so a crash loses nothing. Transactions come
whole, in commit order, with their xid and commit time.

The position is the end of the last transaction delivered (a commit
record's end LSN): after a restart every transaction ending at or before it
is skipped, and the slot is advanced to it. The slot never moves past a
stored position; one that did is not ours, and the table is synced again.

Reading: once per ``DS_SYNC__POLL_SECS`` tick (at once while a backlog is
read) one statement advances the slot to the last stored position, reads
the flushed WAL position and peeks up to it, but only when it moved (a
gated subquery), up to ``DS_SYNC__FEED_BATCH_ROWS`` changes. An idle table
costs that one small statement per tick and nothing else. So that each peek decodes little,
the slot's restart point is kept close (``pg_log_standby_snapshot()``
about once a second while data flows; PostgreSQL 14 and 15 lack it, and
there the background writer's own such record, every 15 s while WAL is
written, does it), and the position also moves over WAL of other tables
once there is a megabyte of it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any, LiteralString

import msgspec
from psycopg import errors as pg_errors

from ds_sync.mirror import pgoutput
from ds_sync.mirror.catalog import ensure_replica_identity_full, type_names
from ds_sync.mirror.decoding import Decoder, Transaction
from ds_sync.mirror.feed import ChangeFeed
from ds_sync.mirror.model import Control, FeedBatch, FeedError
from ds_sync.mirror.pgoutput import lsn_number, lsn_text
from ds_sync.mirror.slots import (
    SlotInfo,
    bound_slot_wal,
    create_slot,
    drop_slot,
    ensure_publication,
    retained_wal,
    slot_info,
    slot_name,
)
from ds_sync.mirror.snapshot import TableSnapshot, Visibility

if TYPE_CHECKING:
    from ds_sync.mirror.model import Item, TableShape

log = logging.getLogger("ds_sync.mirror")

FEED = "native"
# Other tables' WAL the position moves over on its own, once there is this much.
IDLE_MOVE_BYTES = 1 << 20
STANDBY_SNAPSHOT_SECS = 1.0
# pg_log_standby_snapshot() exists from PostgreSQL 16 (server_version_num).
STANDBY_SNAPSHOT_SINCE = 160000
RETENTION_CHECK_SECS = 10.0
RETENTION_WARN_EVERY_SECS = 60.0
# A killed ds-sync's backend may still hold the slot for a moment.
SLOT_BUSY_WAIT_SECS = 30.0
# One round trip per poll: the flushed WAL position, and a peek up to it only when it moved
# past what was read (a one-time filter: otherwise the peek never runs). OFFSET 0 keeps each
# part a subquery of its own, so the lateral references fix the order of evaluation.
_PEEK_PART = """
LEFT JOIN LATERAL (
    SELECT data FROM pg_logical_slot_peek_binary_changes(f.slot, f.lsn, %s,
        'proto_version', '1', 'publication_names', %s)
    WHERE f.lsn > %s::pg_lsn OFFSET 0
) d ON true
"""
_POLL = (
    "SELECT f.lsn::text, d.data "
    "FROM (SELECT pg_current_wal_flush_lsn() AS lsn, %s::name AS slot OFFSET 0) f" + _PEEK_PART
)
# The same after a stored batch, advancing the slot to it first (the peek then starts there).
_ADVANCE_AND_POLL = (
    "SELECT f.lsn::text, d.data "
    "FROM (SELECT slot_name FROM pg_replication_slot_advance(%s, %s::pg_lsn) OFFSET 0) a "
    "CROSS JOIN LATERAL "
    "(SELECT pg_current_wal_flush_lsn() AS lsn, a.slot_name AS slot OFFSET 0) f" + _PEEK_PART
)


class NativePosition(msgspec.Struct, frozen=True):
    """The native feed's position: its slot, and where delivery stands."""

    slot: str
    phase: str  # "snapshot": a first sync is under way; "stream": decoding from lsn
    lsn: str = "0/0"
    visibility: Visibility | None = None  # the first sync's snapshot, while it matters
    feed: str = FEED


class SlotLost(Exception):
    """The slot is gone or invalidated: what it held can't be read any more."""


class NativeFeed(ChangeFeed):
    """Logical decoding of one table, through its own slot and publication."""

    async def start(self, position: bytes | None) -> None:
        context = self.context
        conn, table, options = context.conn, context.table, context.options
        self._slot = slot_name(options.group, table)
        self._poll = options.poll_secs
        self._limit = options.batch_rows
        shape = context.shape
        await ensure_replica_identity_full(conn, table, shape)
        await ensure_publication(conn, self._slot, table)
        await bound_slot_wal(conn, options.max_slot_wal_keep_size)
        self._shape: TableShape = shape
        self._decoder = Decoder(shape.primary_key, {})
        self._snapshot: TableSnapshot | None = None
        self._first_chunk = False
        self._visibility: Visibility | None = None
        self._lsn = 0
        self._advanced = 0
        self._advance_to = 0  # a stored position the slot is advanced to with the next poll
        self._seen_flush = 0
        self._polled_at = 0.0
        self._backlog = False  # the last peek stopped at its row limit
        self._standby_at = self._retention_at = self._warned_at = 0.0
        self._standby_lsn = 0
        self._standby_allowed = conn.info.server_version >= STANDBY_SNAPSHOT_SINCE
        stored = self._decode(position)
        slot, resumable = await self._usable_slot(stored)
        if stored is None or stored.phase == "snapshot" or not resumable:
            await self._begin_snapshot(slot)
            return
        self._lsn = lsn_number(stored.lsn)
        self._visibility = stored.visibility
        self._advanced = slot.confirmed_flush
        context.metrics.state = "streaming"
        await self._advance(self._lsn)

    async def next_batch(self) -> FeedBatch:
        while True:
            if self._snapshot is not None:
                return await self._snapshot_batch(self._snapshot)
            await self._housekeeping()
            # One poll per tick: what committed meanwhile comes as one batch. A backlog
            # (the last peek stopped at its row limit) is read on at once.
            wait = self._polled_at + self._poll - time.monotonic()
            if wait > 0 and not self._backlog:
                await asyncio.sleep(wait)
            self._polled_at = time.monotonic()
            try:
                batch = await self._read()
            except SlotLost as exc:
                await self._start_over(str(exc))
                continue
            if batch is not None:
                return batch

    async def delivered(self, position: bytes) -> None:
        stored = self._decode(position)
        if stored is not None and stored.phase == "stream":
            # Done with the next poll's statement: no round trip of its own.
            self._advance_to = max(self._advance_to, lsn_number(stored.lsn))

    async def close(self) -> None:
        self._snapshot = None

    # Slot set-up and the first sync.

    async def _usable_slot(self, stored: NativePosition | None) -> tuple[SlotInfo, bool]:
        """The table's slot, made anew when it can't serve; and whether ``stored`` can be
        resumed from (else the table is synced again from scratch)."""
        conn = self.context.conn
        if stored is not None and stored.slot != self._slot:
            # DS_SYNC__NAME changed: the old slot would hold WAL for nobody.
            log.warning("table %s: dropping its old slot %s", self.context.table.text, stored.slot)
            await drop_slot(conn, stored.slot)
            stored = None
        slot = await slot_info(conn, self._slot)
        problem = None
        if slot is not None and slot.lost:
            problem = f"slot {self._slot} was invalidated by Postgres ({slot.reason})"
            await drop_slot(conn, self._slot)
            slot = None
        elif slot is None and stored is not None and stored.phase == "stream":
            problem = f"slot {self._slot} is gone"
        elif (
            slot is not None
            and stored is not None
            and stored.phase == "stream"
            and slot.confirmed_flush > lsn_number(stored.lsn)
        ):
            problem = f"slot {self._slot} moved past what ds-sync delivered: it is not ours"
            await drop_slot(conn, self._slot)
            slot = None
        if problem is not None:
            log.warning(
                "table %s: %s; its changes since may be lost, so it is synced again from scratch",
                self.context.table.text,
                problem,
            )
            self.context.metrics.resyncs += 1
        if slot is None:
            slot = await create_slot(conn, self._slot)
            log.info("table %s: created replication slot %s", self.context.table.text, self._slot)
            return slot, False
        return slot, True

    async def _begin_snapshot(self, slot: SlotInfo) -> None:
        # Everything committed before the slot's position is in the snapshot.
        self._lsn = self._advanced = slot.confirmed_flush
        snapshot = TableSnapshot(self.context.conn, self._shape)
        self._visibility = await snapshot.begin(self.context.table)
        self._snapshot = snapshot
        self._first_chunk = True
        self.context.metrics.state = "snapshot"

    async def _snapshot_batch(self, snapshot: TableSnapshot) -> FeedBatch:
        changes = await snapshot.read(self._limit)
        items: list[Item] = [Control.SNAPSHOT_START] if self._first_chunk else []
        self._first_chunk = False
        items += changes
        if len(changes) == self._limit:
            return FeedBatch(tuple(items), self._encode("snapshot"))
        await snapshot.finish()
        self._snapshot = None
        items.append(Control.SNAPSHOT_END)
        return FeedBatch(tuple(items), self._encode("stream"))

    async def _start_over(self, problem: str) -> None:
        log.warning("table %s: %s; syncing it again from scratch", self.context.table.text, problem)
        self.context.metrics.resyncs += 1
        await drop_slot(self.context.conn, self._slot)
        await self._begin_snapshot(await create_slot(self.context.conn, self._slot))

    # Decoding.

    async def _read(self) -> FeedBatch | None:
        """One poll: the slot advanced to what was stored, the flushed WAL position, and a
        peek up to it when it moved; a batch of what is new, or None."""
        peek = (self._limit, self._slot, lsn_text(self._seen_flush))
        advance_to = self._advance_to
        if advance_to > self._advanced:
            rows = await self._slot_call(
                _ADVANCE_AND_POLL, (self._slot, lsn_text(advance_to), *peek)
            )
            self._advanced = advance_to
        else:
            rows = await self._slot_call(_POLL, (self._slot, *peek))
        flush = lsn_number(str(rows[0][0]))
        if flush <= self._seen_flush:
            self._backlog = False
            return None  # nothing new: the peek did not run
        data = [bytes(row[1]) for row in rows if row[1] is not None]
        messages = [pgoutput.parse(raw) for raw in data]
        unknown = self._decoder.unknown_types(messages)
        if unknown:
            self._decoder.types.update(await type_names(self.context.conn, unknown))
        # Fewer rows than asked for: everything committed before `flush` was read.
        complete = len(data) < self._limit
        self._backlog = not complete
        if complete:
            self._seen_flush = flush
        return self._batch(self._decoder.decode(messages), flush if complete else 0)

    def _batch(self, transactions: list[Transaction], covered: int) -> FeedBatch | None:
        """The new transactions' changes; the position moves to ``covered`` (all of the WAL
        before it is read) when that is further."""
        items: list[Item] = []
        end = self._lsn
        committed_at = None
        newer = False
        for tx in transactions:
            if tx.end_lsn <= self._lsn:
                continue  # delivered before this position
            newer = True
            end = max(end, tx.end_lsn)
            if self._visibility is not None:
                if not self._visibility.applies_to(tx.commit_lsn):
                    self._visibility = None
                elif self._visibility.sees(tx.xid):
                    continue  # the snapshot has it
            items += tx.items
            committed_at = tx.commit_time_us / 1e6
        if not newer and covered - self._lsn < IDLE_MOVE_BYTES:
            return None
        self._lsn = max(end, covered)
        return FeedBatch(tuple(items), self._encode("stream"), committed_at)

    async def _advance(self, lsn: int) -> None:
        """Let the slot release what comes before ``lsn`` (stored, so never needed again)."""
        if lsn <= self._advanced:
            return
        await self._slot_call(
            "SELECT pg_replication_slot_advance(%s, %s::pg_lsn)", (self._slot, lsn_text(lsn))
        )
        self._advanced = lsn

    async def _slot_call(
        self, query: LiteralString, params: tuple[object, ...]
    ) -> list[tuple[Any, ...]]:
        """Run a slot function; wait while another backend (a killed ds-sync's) holds the slot."""
        started = time.monotonic()
        while True:
            try:
                cursor = await self.context.conn.execute(query, params)
                return await cursor.fetchall()
            except pg_errors.ObjectInUse as exc:
                if time.monotonic() - started > SLOT_BUSY_WAIT_SECS:
                    raise FeedError(f"slot {self._slot} stays in use elsewhere: {exc}") from None
                await asyncio.sleep(0.1)
            except pg_errors.UndefinedObject as exc:
                raise SlotLost(f"slot {self._slot} is gone ({exc})") from None
            except pg_errors.ObjectNotInPrerequisiteState as exc:
                raise SlotLost(f"slot {self._slot} can't be read: {exc}") from None

    # Upkeep: the slot's restart point, and the WAL it holds.

    async def _housekeeping(self) -> None:
        now = time.monotonic()
        # Only after the slot moved: an idle server gets no WAL record from ds-sync.
        if (
            self._standby_allowed
            and self._advanced != self._standby_lsn
            and now - self._standby_at >= STANDBY_SNAPSHOT_SECS
        ):
            self._standby_at, self._standby_lsn = now, self._advanced
            try:
                # Lets the slot's restart_lsn follow its position: peeks decode less.
                await self.context.conn.execute("SELECT pg_log_standby_snapshot()")
            except (pg_errors.InsufficientPrivilege, pg_errors.UndefinedFunction) as exc:
                self._standby_allowed = False
                log.info(
                    "pg_log_standby_snapshot() is not available to ds-sync (%s): the slot's "
                    "restart point follows every 15 s instead of every second",
                    type(exc).__name__,
                )
        if now - self._retention_at >= RETENTION_CHECK_SECS:
            self._retention_at = now
            await self._check_retention(now)

    async def _check_retention(self, now: float) -> None:
        found = await retained_wal(self.context.conn, self._slot)
        if found is None:
            return
        held, status = found
        self.context.metrics.slot_wal_bytes = held
        limit = self.context.options.slot_warn_mb << 20
        if (
            held > limit or status == "unreserved"
        ) and now - self._warned_at >= RETENTION_WARN_EVERY_SECS:
            self._warned_at = now
            log.warning(
                "table %s: slot %s holds %.0f MB of WAL (wal_status %s): ds-sync is behind",
                self.context.table.text,
                self._slot,
                held / (1 << 20),
                status,
            )

    # Positions.

    def _encode(self, phase: str) -> bytes:
        if phase == "snapshot":
            return msgspec.json.encode(NativePosition(self._slot, phase))
        return msgspec.json.encode(
            NativePosition(self._slot, phase, lsn_text(self._lsn), self._visibility)
        )

    @staticmethod
    def _decode(position: bytes | None) -> NativePosition | None:
        if position is None:
            return None
        try:
            found = msgspec.json.decode(position, type=NativePosition)
        except msgspec.DecodeError:
            return None
        return found if found.feed == FEED else None

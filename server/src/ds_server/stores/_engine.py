"""The stream engine every backend shares: the protocol on top of a ``Persistence``.

The engine serves the stream operations of ``Store``; the extensions
(``_buckets``, ``_snapshots``) are composed on it by ``_log_store.LogStore``
and use only its extension API: ``lookup``, ``entries``, ``read_from``,
``is_boundary`` and ``catalog_lock``.

It keeps each stream's state in memory, serializes writes per stream,
applies the shared rules, resolves forks, expires streams, and wakes live
readers. Readers only ever see data the backend has made durable: a
stream's ``visible_tail`` trails its write tail while a group commit is in
flight.

Whether the held states are the truth (a backend this process owns) or a
cache of a backend other processes share is its ``coherence``, chosen once
from the backend (``_coherence``); the engine itself has one mode.

A write whose durability fails (disk full) rewinds the stream's state to
just before it: that write and every later one still in flight were decided
on top of it, and the backend refuses them too, so the state again matches
what is stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ds_server.protocol.offsets import Sentinel
from ds_server.stores import _rules
from ds_server.stores._coherence import coherence_for
from ds_server.stores._commit import AppendCommit
from ds_server.stores._entry import Entry
from ds_server.stores._forks import resolve_fork_offset
from ds_server.stores._quotas import NO_QUOTAS, Ledger, QuotaPolicy, stored_bytes
from ds_server.stores._rules import StreamState
from ds_server.stores.base import (
    AppendOutcome,
    AppendResult,
    CreateResult,
    Expiry,
    ReadResult,
    Store,
)
from ds_server.stores.errors import (
    InvalidOffset,
    OffsetGone,
    StreamExists,
    StreamGone,
    StreamNotFound,
)
from ds_server.stores.persistence import InlinePersistence

if TYPE_CHECKING:
    from collections.abc import Awaitable, Coroutine, Iterable

    from ds_server.live import LiveNotifier
    from ds_server.stores._producers import ProducerState
    from ds_server.stores._shared import SharedCatalog
    from ds_server.stores.base import AppendRequest, CreateRequest, ProducerClaim, StreamInfo
    from ds_server.stores.persistence import Chunk, Persistence

log = logging.getLogger("ds_server")

_SWEEP_INTERVAL_SECS = 1.0
# Page size when a fork's sub-offset counts JSON messages.
_PAGE_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class _Mark:
    """What an append may change in a state, as it was before (to rewind a failed write)."""

    tail: int
    closed: bool
    closed_by: ProducerClaim | None
    producers: dict[str, ProducerState]
    writer_seqs: dict[str, str]
    version: int

    @classmethod
    def of(cls, state: StreamState) -> _Mark:
        return cls(
            state.tail,
            state.closed,
            state.closed_by,
            dict(state.producers),
            dict(state.writer_seqs),
            state.version,
        )

    def restore(self, state: StreamState) -> None:
        state.tail = self.tail
        state.closed = self.closed
        state.closed_by = self.closed_by
        state.producers = dict(self.producers)
        state.writer_seqs = dict(self.writer_seqs)
        state.version = self.version


def _refund(commit: AppendCommit) -> None:
    """Uncount an append the backend did not take."""
    if commit.usage is not None:
        commit.usage.refund(commit.size)


def _retrieve(task: asyncio.Future[Any]) -> None:
    # A failed write whose client went away has no other reader of its error.
    if not task.cancelled():
        task.exception()


class Engine(Store):
    """The stream operations of a Store over a Persistence; ``_log_store.LogStore`` completes it."""

    def __init__(
        self,
        live: LiveNotifier,
        persistence: Persistence,
        *,
        max_retained_bytes: int,
        quotas: QuotaPolicy = NO_QUOTAS,
    ) -> None:
        super().__init__(live)
        # The backend: what stores and returns the bytes and states.
        self.persistence = persistence
        # Set when the backend stores at once: appends then take the plain-call path.
        self._inline_backend = persistence if isinstance(persistence, InlinePersistence) else None
        self._max_retained_bytes = max_retained_bytes
        self._entries: dict[str, Entry] = {}
        # Every bucket's totals: the truth on a backend this process owns, a
        # cache of the stored ones on a shared backend (which checks them itself).
        self.ledger = Ledger(quotas)
        # Creates and deletes change the catalog; they are rare, so one lock serves.
        self.catalog_lock = asyncio.Lock()
        self._touched: dict[str, float] = {}
        self._sweeper: asyncio.Task[None] | None = None
        # Whether the states are the truth or a cache of a backend other
        # processes share, chosen once by the backend; the engine never asks which.
        self.coherence = coherence_for(self, persistence)
        # The change feed of a shared backend, for a cluster of processes to hear.
        self.shared: SharedCatalog | None = self.coherence.catalog

    async def start(self) -> None:
        states = await self.persistence.open()
        ledger = self.ledger
        await self.coherence.count_usage(states)
        entries = {
            state.stream_id: Entry(state, None, state.tail, usage=ledger.of(state.path))
            for state in states
        }
        for entry in entries.values():
            base = entries.get(entry.state.forked_from_id or "")
            if base is not None:
                entry.base = base
                base.state.fork_refs += 1
            self._entries[entry.state.path] = entry
        # A crash between purging a stream's last fork and the stream itself
        # leaves it soft-deleted with no fork holding it: finish the purge.
        for entry in list(self._entries.values()):
            state = entry.state
            if (
                state.soft_deleted
                and state.fork_refs == 0
                and self._entries.get(state.path) is entry
            ):
                await self._purge(entry)
        await self.coherence.start()
        self._sweeper = asyncio.create_task(self._sweep_forever())

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        await self._flush_access()
        await self.persistence.close()

    # -- operations -------------------------------------------------------

    def create(self, request: CreateRequest) -> Coroutine[Any, Any, CreateResult]:
        return self.coherence.create(request)

    async def decide_create(self, request: CreateRequest) -> CreateResult:
        """Create on the states held (``create`` goes through the coherence)."""
        async with self.catalog_lock:
            moment = self.clock()
            existing = self._entries.get(request.path)
            if existing is not None:
                state = existing.state
                if state.soft_deleted:
                    raise StreamExists("a deleted stream's name stays reserved while forks use it")
                if state.is_expired(moment):
                    await self._expire(existing)
                else:
                    expiry = request.expiry
                    if request.fork is not None and expiry == Expiry():
                        expiry = (await self._source(request.fork.source, moment)).state.expiry
                    if not _rules.matches_existing(state, request, expiry):
                        raise StreamExists()
                    return CreateResult(created=False, info=existing.info())
            base: Entry | None = None
            content_type = request.content_type or "application/octet-stream"
            expiry = request.expiry
            fork_offset = 0
            if request.fork is not None:
                base = await self._source(request.fork.source, moment)
                if request.content_type is None:
                    content_type = base.state.content_type
                elif not _rules.same_content_type(request.content_type, base.state.content_type):
                    raise StreamExists("a fork's content type must be its source's")
                if expiry == Expiry():
                    expiry = base.state.expiry
                fork_offset = await self._fork_offset(base, request)
            size = sum(len(message) for message in request.messages)
            # A fork retains what it inherits from its source's earliest offset on.
            earliest = base.state.earliest_offset if base else 0
            if fork_offset - earliest + size > self._max_retained_bytes:
                raise _rules.over_retained_limit(self._max_retained_bytes)
            self.persistence.reserve(size)
            usage = self.ledger.of(request.path)
            charged = fork_offset - earliest + size
            if usage is not None:
                usage.charge(charged, streams=1)
            state = StreamState(
                stream_id=secrets.token_hex(8),
                path=request.path,
                content_type=content_type,
                created_at=moment,
                expiry=expiry,
                last_access=moment,
                tail=fork_offset + size,
                fork_offset=fork_offset,
                forked_from=request.fork.source if request.fork else None,
                forked_from_id=base.state.stream_id if base else None,
                fork_requested_offset=request.fork.offset if request.fork else None,
                fork_sub_offset=request.fork.sub_offset if request.fork else 0,
                closed=request.closed,
                # The source's bytes before its snapshot may be gone: so are the fork's.
                earliest_offset=base.state.earliest_offset if base else 0,
            )
            try:
                await self.persistence.create(state, request.messages)
            except BaseException:
                if usage is not None:
                    usage.refund(charged, streams=1)
                raise
            if base is not None:
                base.state.fork_refs += 1
            entry = Entry(state, base, state.tail, usage=usage)
            self._entries[request.path] = entry
        self.live.notify(request.path)
        return CreateResult(created=True, info=entry.info())

    def append(self, request: AppendRequest) -> Coroutine[Any, Any, AppendResult]:
        return self.coherence.append(request)

    async def decide_append(self, request: AppendRequest) -> AppendResult:
        """Append on the states held (``append`` goes through the coherence)."""
        path = request.path
        entry = self._unexpired(path, touch=True) or await self.lookup(path, touch=True)
        inline = self._inline_backend
        if inline is not None and not entry.lock.locked():
            # Nothing here can suspend: the backend stores without awaiting, so
            # no other append can interleave (no lock needed) and cancellation
            # cannot cut the write in half.
            decision, pending, written_tail = self._decide_and_store_now(inline, entry, request)
        else:
            # The locked part runs to its end even if this request is cancelled
            # (its client left): a write, once handed to the backend, is also
            # applied to the state before the next one is decided.
            write = asyncio.ensure_future(self._write(entry, request))
            write.add_done_callback(_retrieve)
            decision, pending, written_tail = await asyncio.shield(write)
        state = entry.state
        if pending is not None:
            # Acknowledge only what is durable, duplicates included. The write
            # goes on if this request is cancelled (its client left).
            await asyncio.shield(pending)
        if written_tail > entry.visible_tail or state.closed:
            entry.visible_tail = max(entry.visible_tail, written_tail)
            self.live.notify(path)
        # Closed as readers see it: a close still in flight is not visible yet.
        closed = state.closed and entry.visible_tail == state.tail
        if decision.outcome is AppendOutcome.DUPLICATE:
            echo = decision.echo
            return AppendResult(
                outcome=decision.outcome,
                tail=entry.visible_tail,
                closed=closed,
                producer_epoch=echo.epoch if echo else None,
                producer_seq=echo.last_seq if echo else None,
            )
        claim = decision.producer
        # Appends sharing a group commit may resume in any order: answer with
        # this write's own end, not a later write's that is visible already.
        return AppendResult(
            outcome=decision.outcome,
            tail=written_tail,
            closed=closed,
            producer_epoch=claim.epoch if claim else None,
            producer_seq=claim.seq if claim else None,
        )

    async def _write(
        self, entry: Entry, request: AppendRequest
    ) -> tuple[_rules.AppendDecision, asyncio.Future[None] | None, int]:
        """Decide and store one append under the stream's lock; apply it to the state."""
        async with entry.lock:
            decision, commit = self._decide(entry, request)
            if commit is None:
                return decision, entry.pending, entry.state.tail
            try:
                durable = await self.persistence.append(commit)
            except BaseException:
                _refund(commit)
                raise
            return decision, self._apply(entry, request, decision, durable), entry.state.tail

    def _decide_and_store_now(
        self, inline: InlinePersistence, entry: Entry, request: AppendRequest
    ) -> tuple[_rules.AppendDecision, asyncio.Future[None] | None, int]:
        """:meth:`_write` for an inline backend: no lock, no coroutine."""
        decision, commit = self._decide(entry, request)
        if commit is None:
            return decision, entry.pending, entry.state.tail
        try:
            inline.append_now(commit)
        except BaseException:
            _refund(commit)
            raise
        return decision, self._apply(entry, request, decision, None), entry.state.tail

    def _decide(
        self, entry: Entry, request: AppendRequest
    ) -> tuple[_rules.AppendDecision, AppendCommit | None]:
        """Decide one append: what to store (None for a duplicate), space reserved."""
        if self._entries.get(request.path) is not entry or entry.state.soft_deleted:
            raise StreamNotFound()
        state = entry.state
        decision = _rules.decide_append(state, request, self._max_retained_bytes)
        if decision.outcome is AppendOutcome.DUPLICATE:
            return decision, None
        self.persistence.reserve(decision.size)
        usage = entry.usage
        if usage is not None and decision.size:
            usage.charge(decision.size)
        commit = AppendCommit(
            stream_id=state.stream_id,
            start=state.tail,
            messages=decision.messages,
            size=decision.size,
            producer=decision.producer,
            writer=request.writer,
            stream_seq=request.stream_seq,
            close=decision.close,
            last_access=state.last_access,
            version=state.version + 1,
            usage=usage,
        )
        return decision, commit

    def _apply(
        self,
        entry: Entry,
        request: AppendRequest,
        decision: _rules.AppendDecision,
        durable: Awaitable[None] | None,
    ) -> asyncio.Future[None] | None:
        """Apply a stored append to the state; the wait for its durability, if any."""
        state = entry.state
        pending = None if durable is None else self._guard(entry, durable, _Mark.of(state))
        _rules.apply_decision(state, request, decision)
        entry.pending = pending
        return pending

    async def read(self, path: str, offset: int | Sentinel, max_bytes: int) -> ReadResult:
        entry = await self.lookup(path, touch=True)
        info = entry.info()
        tail = entry.visible_tail
        if offset is Sentinel.NOW:
            return ReadResult(info=info, start=tail, next_offset=tail)
        start = 0 if offset is Sentinel.BEGINNING else offset
        return await self.read_from(entry, info, start, max_bytes, whole=entry.state.is_json)

    async def read_from(
        self,
        entry: Entry,
        info: StreamInfo,
        start: int,
        max_bytes: int,
        *,
        whole: bool,
        retained: bool = False,
    ) -> ReadResult:
        """Read from ``start``; ``retained`` readers hold data below the earliest offset."""
        state = entry.state
        if start < state.earliest_offset and not retained:
            raise OffsetGone()
        if start > entry.visible_tail or (whole and not await self.is_boundary(entry, start)):
            raise InvalidOffset()
        chunks = await self._collect(entry, start, entry.visible_tail, max_bytes, whole=whole)
        if start < state.earliest_offset and not retained:
            raise OffsetGone()  # a snapshot moved retention while we were reading
        next_offset = chunks[-1].start + len(chunks[-1].data) if chunks else start
        return ReadResult(
            info=info, start=start, next_offset=next_offset, chunks=[c.data for c in chunks]
        )

    async def head(self, path: str) -> StreamInfo:
        return (await self.lookup(path, touch=False)).info()

    async def delete(self, path: str) -> None:
        async with self.catalog_lock:
            entry = await self.lookup(path, touch=False, catalog_locked=True)
            async with entry.lock:
                await self._remove(entry)
        self.live.notify(path)

    # -- extension API ------------------------------------------------------

    def entries(self) -> Iterable[Entry]:
        """Every stream the engine holds (soft-deleted and expired ones included)."""
        return self._entries.values()

    def entry_at(self, path: str) -> Entry | None:
        """The stream the engine holds at ``path``, if any, as cached."""
        return self._entries.get(path)

    def hold(self, state: StreamState, base: Entry | None) -> Entry:
        """Hold a stream another process stored (shared backends)."""
        entry = Entry(state, base, state.tail, usage=self.ledger.of(state.path))
        self._entries[state.path] = entry
        return entry

    def forget(self, entry: Entry) -> None:
        """Drop a stream another process purged from the cache (its storage is gone already)."""
        if self._entries.get(entry.state.path) is entry:
            del self._entries[entry.state.path]
        self._touched.pop(entry.state.stream_id, None)

    async def reload_buckets(self) -> None:
        """Re-read the buckets (another process changed them); LogStore has them."""

    async def reload_usage(self, bucket: str | None) -> None:
        """Shared backends: take the stored totals of ``bucket`` (None: of none)."""
        await self.coherence.reload_usage(bucket)

    def watched_buckets(self) -> list[str]:
        """Buckets whose totals metrics report: those with a quota of their own (and
        LogStore adds the buckets made on /ds). A shared backend keeps a row for every
        bucket ever written; only these are re-read, so the re-reading stays small."""
        return list(self.ledger.policy.buckets)

    # -- internals --------------------------------------------------------

    def _guard(self, entry: Entry, durable: Awaitable[None], mark: _Mark) -> asyncio.Future[None]:
        """Wait for a write to be durable; if it fails, rewind the state to ``mark``."""
        generation = entry.generation

        async def settle() -> None:
            try:
                await durable
            except Exception as error:
                async with entry.lock:
                    # Only the first failure since the write was decided rewinds:
                    # the backend resolves a stream's writes in order, so it is
                    # the earliest one, and later ones were decided on top of it.
                    if entry.generation == generation:
                        entry.generation += 1
                        usage = entry.usage
                        if usage is not None and self._entries.get(entry.state.path) is entry:
                            usage.refund(entry.state.tail - mark.tail)
                        mark.restore(entry.state)
                        entry.pending = None
                # Named: compiled, a bare raise after an await may re-raise another.
                raise error

        task = asyncio.ensure_future(settle())
        task.add_done_callback(_retrieve)
        return task

    async def lookup(self, path: str, *, touch: bool, catalog_locked: bool = False) -> Entry:
        """The live stream at ``path`` (``touch`` renews a sliding TTL); 404/410 otherwise."""
        await self.coherence.refresh(path)
        entry = self._unexpired(path, touch=touch)
        if entry is not None:
            if (
                touch
                and entry.state.expiry.ttl_seconds is not None
                and await self.coherence.touched(entry)
            ):
                self._touched.pop(entry.state.stream_id, None)
            return entry
        entry = self._entries[path]
        state = entry.state
        if catalog_locked:
            await self._expire(entry)
        else:
            async with self.catalog_lock:
                if self._entries.get(path) is entry and not state.soft_deleted:
                    await self._expire(entry)
        raise StreamGone() if state.soft_deleted else StreamNotFound()

    def _unexpired(self, path: str, *, touch: bool) -> Entry | None:
        """The entry of ``path``, or None when it has expired (``lookup`` expires it).

        Without a suspension point, so the append path needs no coroutine for it.
        """
        entry = self._entries.get(path)
        if entry is None:
            raise StreamNotFound()
        state = entry.state
        if state.soft_deleted:
            raise StreamGone()
        moment = self.clock()
        if state.is_expired(moment):
            return None
        if touch:
            state.touch(moment)
            if state.expiry.ttl_seconds is not None:
                self._touched[state.stream_id] = moment
        return entry

    async def _source(self, path: str, moment: float) -> Entry:
        """The live stream a fork is taken from."""
        entry = self._entries.get(path)
        if entry is None:
            raise StreamNotFound("fork source not found")
        if entry.state.soft_deleted:
            raise StreamExists("fork source was deleted")
        if entry.state.is_expired(moment):
            await self._expire(entry)
            raise StreamNotFound("fork source expired")
        return entry

    async def _fork_offset(self, base: Entry, request: CreateRequest) -> int:
        assert request.fork is not None

        async def chunks_from(position: int, count: int) -> list[Chunk]:
            if not base.state.is_json:
                return await self._collect(base, position, base.visible_tail, count)
            chunks: list[Chunk] = []
            while len(chunks) < count and position < base.visible_tail:
                page = await self._collect(base, position, base.visible_tail, _PAGE_BYTES)
                chunks.extend(page)
                position = page[-1].start + len(page[-1].data)
            return chunks

        async def is_boundary(position: int) -> bool:
            return await self.is_boundary(base, position)

        anchor = request.fork.offset
        if anchor is not None and anchor < base.state.earliest_offset:
            # The data before the source's snapshot is gone; a fork can't inherit it.
            raise OffsetGone("fork offset is before the source's earliest retained offset")
        return await resolve_fork_offset(
            request.fork, base.state, base.visible_tail, is_boundary, chunks_from
        )

    async def _collect(
        self, entry: Entry, start: int, limit: int, max_bytes: int, *, whole: bool | None = None
    ) -> list[Chunk]:
        """Chunks from ``start`` up to ``limit``, through the fork chain.

        ``whole`` keeps messages whole (default: for JSON streams only).
        """
        state = entry.state
        whole = state.is_json if whole is None else whole
        chunks: list[Chunk] = []
        if start < state.fork_offset and entry.base is not None:
            inherited_limit = min(limit, state.fork_offset)
            chunks = await self._collect(entry.base, start, inherited_limit, max_bytes, whole=whole)
            end = chunks[-1].start + len(chunks[-1].data) if chunks else start
            max_bytes -= sum(len(chunk.data) for chunk in chunks)
            if end < inherited_limit or max_bytes <= 0:
                return chunks
            start = state.fork_offset
        if start >= limit:
            return chunks
        own = await self.persistence.read(
            state.stream_id, start, limit, max(max_bytes, 1), whole=whole
        )
        return chunks + own

    async def is_boundary(self, entry: Entry, position: int) -> bool:
        """Whether ``position`` starts a message (or append) of the stream, forks included."""
        while True:
            state = entry.state
            if position in (entry.visible_tail, state.fork_offset):
                return True
            if position > state.fork_offset:
                return await self.persistence.is_boundary(state.stream_id, position)
            if entry.base is None:
                return False
            entry = entry.base

    async def _remove(self, entry: Entry) -> None:
        """Delete, or soft-delete while forks still read the data."""
        if await self._has_forks(entry):
            entry.state.soft_deleted = True
            entry.state.version += 1
            try:
                await self.persistence.save_state(entry.state)
            except BaseException:
                entry.state.soft_deleted = False
                entry.state.version -= 1
                raise
        else:
            await self._purge(entry)

    async def _has_forks(self, entry: Entry) -> bool:
        """Whether un-purged forks read the stream (any process's, on a shared backend)."""
        return await self.coherence.has_forks(entry)

    async def _expire(self, entry: Entry) -> None:
        """Expire a stream (the catalog lock is held)."""
        async with entry.lock:
            await self._remove(entry)
        self.live.notify(entry.state.path)

    async def _purge(self, entry: Entry) -> None:
        """Drop a stream for good, then release its hold on its source (cascading)."""
        current: Entry | None = entry
        while current is not None:
            state = current.state
            # Storage first: if that fails, the stream is still there, in memory too.
            await self.persistence.purge(state)
            usage = current.usage
            if usage is not None:
                usage.refund(stored_bytes(state), streams=1)
                self.coherence.released(usage)
            if self._entries.get(state.path) is current:
                del self._entries[state.path]
            self._touched.pop(state.stream_id, None)
            base = current.base
            if base is None:
                return
            base.state.fork_refs -= 1
            await self.coherence.source_released(base)
            current = base if base.state.soft_deleted and not await self._has_forks(base) else None

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(_SWEEP_INTERVAL_SECS)
            try:
                await self.sweep()
            except Exception:
                # A full disk must not stop expiry for good; the next sweep retries.
                log.exception("sweeping expired streams failed")

    async def sweep(self) -> None:
        """Expire what is due and persist recent accesses (runs every second)."""
        moment = self.clock()
        async with self.catalog_lock:
            for entry in list(self._entries.values()):
                state = entry.state
                if (
                    not state.soft_deleted
                    and state.is_expired(moment)
                    and await self.coherence.still_expired(entry, moment)
                ):
                    await self._expire(entry)
        await self._flush_access()
        await self.coherence.swept()

    async def _flush_access(self) -> None:
        if self._touched:
            accesses, self._touched = list(self._touched.items()), {}
            await self.persistence.save_access(accesses)

"""How the engine's stream states stay true to the stored ones: owned, or a cache.

The engine holds every stream's state in memory. Whether that is the truth
or a cache is decided once, by the backend: ``LocalCoherence`` when this
process owns the backend (memory, SQLite, files: the states are the truth,
nothing to check), ``SharedCoherence`` when other processes write to it too
(postgres: every decision is checked against the stored state, retried on a
stale one, and the change feed keeps the cache honest; ``_shared``). The
engine asks its coherence at the few points where the two differ and never
asks which one it has.
"""

from __future__ import annotations

import abc
import contextlib
from typing import TYPE_CHECKING, Any, Protocol

from ds_server.stores._quotas import bucket_of
from ds_server.stores._shared import MAX_ROUNDS, SharedCatalog
from ds_server.stores.base import AppendOutcome
from ds_server.stores.errors import (
    PayloadTooLarge,
    QuotaExceeded,
    QuotaRefused,
    StaleStream,
    StoreError,
    StreamNotFound,
)
from ds_server.stores.persistence import SharedPersistence

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Iterable

    from ds_server.live import LiveNotifier
    from ds_server.stores._entry import Entry
    from ds_server.stores._quotas import Ledger, Usage
    from ds_server.stores._rules import StreamState
    from ds_server.stores.base import AppendRequest, AppendResult, CreateRequest, CreateResult
    from ds_server.stores.persistence import Persistence

# Shared backends: re-read every bucket's totals this many sweeps apart.
_USAGE_REFRESH_SWEEPS = 15


class CoherentEngine(Protocol):
    """What a coherence needs of the stream engine (``_engine.Engine``)."""

    live: LiveNotifier
    ledger: Ledger
    clock: Callable[[], float]

    def entries(self) -> Iterable[Entry]: ...
    def entry_at(self, path: str) -> Entry | None: ...
    def hold(self, state: StreamState, base: Entry | None) -> Entry: ...
    def forget(self, entry: Entry) -> None: ...
    def watched_buckets(self) -> list[str]: ...
    async def reload_buckets(self) -> None: ...
    async def decide_create(self, request: CreateRequest) -> CreateResult: ...
    async def decide_append(self, request: AppendRequest) -> AppendResult: ...


class Coherence(abc.ABC):
    """The points where an engine over an owned backend and one over a shared one differ."""

    # What a cluster of processes listens through (the change feed), if shared.
    catalog: SharedCatalog | None

    @abc.abstractmethod
    async def count_usage(self, states: list[StreamState]) -> None:
        """Take every bucket's totals at start, from ``states`` or as stored."""

    @abc.abstractmethod
    async def start(self) -> None:
        """Begin following other processes' changes, if any; the engine is loaded."""

    @abc.abstractmethod
    def create(self, request: CreateRequest) -> Coroutine[Any, Any, CreateResult]:
        """The engine's create, decided on states that are current."""

    @abc.abstractmethod
    def append(self, request: AppendRequest) -> Coroutine[Any, Any, AppendResult]:
        """The engine's append, decided on states that are current."""

    @abc.abstractmethod
    async def catch_up(self) -> None:
        """Return once every change other processes committed before now is held."""

    @abc.abstractmethod
    async def refresh(self, path: str) -> None:
        """Before a lookup of ``path``: make its held state the stored one."""

    @abc.abstractmethod
    async def touched(self, entry: Entry) -> bool:
        """A sliding TTL was renewed: whether the access is stored now (else the sweep does)."""

    @abc.abstractmethod
    async def has_forks(self, entry: Entry) -> bool:
        """Whether un-purged forks (any process's) read the stream."""

    @abc.abstractmethod
    async def reload_usage(self, bucket: str | None) -> None:
        """Take the stored totals of ``bucket`` (None: of none), if others change them."""

    @abc.abstractmethod
    def released(self, usage: Usage) -> None:
        """A stream of ``usage``'s bucket was purged (its bytes refunded)."""

    @abc.abstractmethod
    async def source_released(self, base: Entry) -> None:
        """A purged fork released ``base``; another process may have changed it."""

    @abc.abstractmethod
    async def still_expired(self, entry: Entry, moment: float) -> bool:
        """Whether a stream found expired at ``moment`` is so as stored too."""

    @abc.abstractmethod
    async def swept(self) -> None:
        """One expiry sweep is done."""

    @abc.abstractmethod
    async def quota_refused(self, error: QuotaExceeded, path: str) -> None:
        """Raise ``error``, unless the totals it was judged on may be stale (reloaded then)."""


def coherence_for(engine: CoherentEngine, persistence: Persistence) -> Coherence:
    """The coherence ``persistence`` calls for: shared when other processes write to it."""
    if isinstance(persistence, SharedPersistence):
        return SharedCoherence(engine, persistence)
    return LocalCoherence(engine)


class LocalCoherence(Coherence):
    """This process owns the backend: the held states and totals are the truth."""

    def __init__(self, engine: CoherentEngine) -> None:
        self._engine = engine
        self.catalog = None

    async def count_usage(self, states: list[StreamState]) -> None:
        self._engine.ledger.count(states)

    async def start(self) -> None:
        return None

    def create(self, request: CreateRequest) -> Coroutine[Any, Any, CreateResult]:
        return self._engine.decide_create(request)

    def append(self, request: AppendRequest) -> Coroutine[Any, Any, AppendResult]:
        return self._engine.decide_append(request)

    async def catch_up(self) -> None:
        return None

    async def refresh(self, path: str) -> None:
        return None

    async def touched(self, entry: Entry) -> bool:
        return False  # the sweep stores accesses in batches

    async def has_forks(self, entry: Entry) -> bool:
        return entry.state.fork_refs > 0

    async def reload_usage(self, bucket: str | None) -> None:
        return None

    def released(self, usage: Usage) -> None:
        # Its last stream gone, nothing holds the totals: drop them.
        self._engine.ledger.drop_if_empty(usage)

    async def source_released(self, base: Entry) -> None:
        return None

    async def still_expired(self, entry: Entry, moment: float) -> bool:
        return True

    async def swept(self) -> None:
        return None

    async def quota_refused(self, error: QuotaExceeded, path: str) -> None:
        raise error


class SharedCoherence(Coherence):
    """Other processes write to the backend too: the held states are a cache (``_shared``)."""

    def __init__(self, engine: CoherentEngine, persistence: SharedPersistence) -> None:
        self._engine = engine
        self._persistence = persistence
        self._catalog = SharedCatalog(engine, persistence)
        self.catalog = self._catalog
        self._sweeps = 0

    async def count_usage(self, states: list[StreamState]) -> None:
        await self._load_usage(self._engine.watched_buckets())

    async def start(self) -> None:
        await self._catalog.start()

    def create(self, request: CreateRequest) -> Coroutine[Any, Any, CreateResult]:
        return self._create(request)

    async def _create(self, request: CreateRequest) -> CreateResult:
        catalog = self._catalog
        reloaded = False
        for _ in range(MAX_ROUNDS):
            with contextlib.suppress(StreamNotFound):
                await catalog.refresh(request.path)
            if request.fork is not None:
                with contextlib.suppress(StreamNotFound):
                    await catalog.refresh(request.fork.source)
            try:
                return await self._engine.decide_create(request)
            except StaleStream:
                continue  # another process created the path meanwhile: compare with it
            except QuotaExceeded as error:
                # Judged on cached totals, or refused by the stored ones: decide
                # once more on the stored totals.
                if reloaded:
                    raise error
                reloaded = True
                await self.reload_usage(bucket_of(request.path))
        raise StaleStream()

    def append(self, request: AppendRequest) -> Coroutine[Any, Any, AppendResult]:
        return self._append(request)

    async def _append(self, request: AppendRequest) -> AppendResult:
        catalog = self._catalog
        engine = self._engine
        path = request.path
        reloaded = False
        for _ in range(MAX_ROUNDS):
            entry = engine.entry_at(path) or await catalog.refresh(path)
            try:
                result = await engine.decide_append(request)
                if result.outcome is not AppendOutcome.DUPLICATE or await catalog.is_current(entry):
                    return result
                # A duplicate echoes the producer's newest state: that of the stored one.
            except StaleStream:
                pass
            except QuotaRefused:
                # Another process filled the bucket: decide again on the stored totals.
                await self.reload_usage(bucket_of(path))
            except (PayloadTooLarge, QuotaExceeded) as error:
                # A snapshot published elsewhere frees room without changing the
                # state's version, and other processes change the bucket's totals:
                # decide once more on the stored state and totals.
                if reloaded:
                    raise error
                reloaded = True
                await self.reload_usage(bucket_of(path))
            except StoreError as error:
                # Decided on the cache: an error must hold for the stored state too.
                # (Named, not a bare raise: compiled, a bare raise after an await
                # re-raises whatever exception was handled last.)
                if await catalog.is_current(entry):
                    raise error
            entry.stale = True
            await catalog.refresh(path)
        raise StaleStream()

    async def catch_up(self) -> None:
        await self._catalog.barrier()

    async def refresh(self, path: str) -> None:
        catalog = self._catalog
        held = await catalog.refresh(path)
        if held.state.is_expired(self._engine.clock()):
            # Another replica may have renewed it since we loaded it.
            await catalog.reload(held)

    async def touched(self, entry: Entry) -> bool:
        # Every replica decides expiry from the stored access time: store it now.
        await self._persistence.save_access([(entry.state.stream_id, entry.state.last_access)])
        return True

    async def has_forks(self, entry: Entry) -> bool:
        return await self._persistence.count_forks(entry.state.stream_id) > 0

    async def reload_usage(self, bucket: str | None) -> None:
        if bucket is not None:
            await self._load_usage([bucket])

    def released(self, usage: Usage) -> None:
        return None  # the cached totals may be held by streams loaded later

    async def source_released(self, base: Entry) -> None:
        # Another replica may have soft-deleted the source meanwhile.
        with contextlib.suppress(StoreError):
            await self._catalog.reload(base)

    async def still_expired(self, entry: Entry, moment: float) -> bool:
        # Another process may have renewed or removed it.
        with contextlib.suppress(StoreError):
            await self._catalog.reload(entry)
        if self._engine.entry_at(entry.state.path) is not entry:
            return False
        state = entry.state
        return not state.soft_deleted and state.is_expired(moment)

    async def swept(self) -> None:
        self._sweeps += 1
        if self._sweeps % _USAGE_REFRESH_SWEEPS == 0:
            # The totals other processes changed, for metrics and the next decisions.
            await self._load_usage(self._engine.watched_buckets())

    async def quota_refused(self, error: QuotaExceeded, path: str) -> None:
        # Judged on cached totals, or refused by the stored ones: once more on
        # the stored totals.
        await self.reload_usage(bucket_of(path))

    async def _load_usage(self, buckets: list[str]) -> None:
        """Take the stored totals of ``buckets`` into the ledger."""
        if not buckets:
            return
        for name, size, streams in await self._persistence.load_usage(buckets):
            self._engine.ledger.set(name, size, streams)

"""Keeping the engine's stream states true when several processes share one backend.

With a ``SharedPersistence`` (the postgres backend) every ds-server replica
holds the states as a cache. Three things keep it honest:

- writes are fenced by the backend: a write decided on a stale state fails
  with ``StaleStream`` and the engine reloads and decides again;
- every request that reads a stream first compares the cached state version
  with the stored one (one indexed lookup) and reloads on a difference, so an
  append acknowledged by any replica is visible to the next read anywhere;
- the backend's change feed marks what other processes changed and wakes
  this process's long-poll and SSE readers of those streams; a ``barrier``
  waits until every change committed before it has been seen, which is what
  listings (the whole catalog) rely on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Protocol

from ds_server.stores.errors import StreamNotFound

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ds_server.live import LiveNotifier
    from ds_server.stores._entry import Entry
    from ds_server.stores._rules import StreamState
    from ds_server.stores.persistence import SharedPersistence, StreamChange
    from ds_server.stream_observer import StreamObserver

log = logging.getLogger("ds_server")

# A stale cache is reloaded and the request decided again; more rounds than
# this mean other replicas keep winning the race, so the client retries.
MAX_ROUNDS = 8


class CachingEngine(Protocol):
    """What the cache discipline needs of the stream engine (``_engine.Engine``)."""

    live: LiveNotifier

    def entries(self) -> Iterable[Entry]: ...
    def entry_at(self, path: str) -> Entry | None: ...
    def hold(self, state: StreamState, base: Entry | None) -> Entry: ...
    def forget(self, entry: Entry) -> None: ...
    async def reload_buckets(self) -> None: ...


class SharedCatalog:
    """The cache discipline of an engine over a shared backend."""

    def __init__(self, engine: CachingEngine, persistence: SharedPersistence) -> None:
        self._engine = engine
        self._persistence = persistence
        # Paths another process created or re-created since we last looked.
        self._created: set[str] = set()
        self._buckets_changed = False
        # Who hears of other processes' writes (subscriptions), if anyone.
        self.events: StreamObserver | None = None

    async def start(self) -> None:
        await self._persistence.listen(self._on_change)

    # -- the change feed -------------------------------------------------------

    def _on_change(self, change: StreamChange | None) -> None:
        """Note what another process changed; wake the readers it concerns."""
        engine = self._engine
        if change is None:
            # Changes may have been missed: every cached stream may be stale,
            # and streams or buckets may exist that we never heard of.
            self._buckets_changed = True
            for held in engine.entries():
                held.stale = True
                engine.live.notify(held.state.path)
            self._created.add("")
            return
        if change.origin == self._persistence.origin:
            return
        if change.kind == "bucket":
            self._buckets_changed = True
            return
        entry = engine.entry_at(change.path)
        if change.kind == "create" or entry is None:
            self._created.add(change.path)
        if entry is not None:
            entry.stale = True
        engine.live.notify(change.path)
        events = self.events
        if events is not None:
            if change.kind in ("create", "append") and change.tail > 0:
                events.data_arrived(change.path)
            elif change.kind == "purge" or change.kind == "state":
                events.stream_deleted(change.path)

    async def barrier(self) -> None:
        """Return once the catalog reflects every change committed before the call."""
        await self._persistence.barrier()
        if self._buckets_changed:
            self._buckets_changed = False
            await self._engine.reload_buckets()
        if self._created:
            created, self._created = self._created, set()
            if "" in created:
                await self._reload_all()
            for path in sorted(created - {""}):
                with contextlib.suppress(StreamNotFound):
                    await self.refresh(path)

    async def _reload_all(self) -> None:
        """Hold every stored stream not held yet (after missed changes)."""
        for state in await self._persistence.load_streams():
            if self._engine.entry_at(state.path) is None:
                with contextlib.suppress(StreamNotFound):
                    await self.refresh(state.path)

    # -- freshness ---------------------------------------------------------------

    async def refresh(self, path: str) -> Entry:
        """The entry of ``path`` as stored now (loaded or reloaded as needed); 404 if none."""
        engine = self._engine
        for _ in range(MAX_ROUNDS):
            entry = engine.entry_at(path)
            if entry is None:
                return await self._load(path)
            if await self.settled(entry):
                continue  # a write of ours was in flight: look again
            if not entry.stale:
                stored = await self._persistence.stream_version(entry.state.stream_id)
                if stored == entry.state.version:
                    return entry
            await self.reload(entry)
        return await self._load(path)

    async def settled(self, entry: Entry) -> bool:
        """Wait for our writes of the stream in flight, if any; whether there were some.

        While one is in flight the cache holds its effect and the store does
        not (yet): equal version numbers then say nothing about equal states.
        """
        pending = entry.pending
        if pending is None or pending.done():
            return False
        with contextlib.suppress(Exception):
            await asyncio.shield(pending)
        return True

    async def is_current(self, entry: Entry) -> bool:
        """Whether the cached state of ``entry`` is the stored one."""
        while await self.settled(entry):
            pass
        if self._engine.entry_at(entry.state.path) is not entry or entry.stale:
            return False
        stored = await self._persistence.stream_version(entry.state.stream_id)
        return stored == entry.state.version

    async def reload(self, entry: Entry) -> None:
        """Replace a cached state by the stored one (under the stream's write lock).

        Never while one of our writes is in flight: its effect is in the cache
        but not yet stored, and a write decided on the reloaded state would
        then be decided without it (the two would claim the same version).
        """
        while True:
            if await self.settled(entry):
                continue
            async with entry.lock:
                if entry.pending is not None and not entry.pending.done():
                    continue  # a write was decided while we waited for the lock
                await self._replace(entry)
                return

    async def _replace(self, entry: Entry) -> None:
        """Reload under the stream's lock, with no write of ours in flight."""
        path = entry.state.path
        state = await self._persistence.load_stream(path)
        engine = self._engine
        if state is None or state.stream_id != entry.state.stream_id:
            # Purged, or purged and re-created, by another process.
            engine.forget(entry)
            if state is not None:
                await self._adopt(state)
            return
        state.fork_refs = entry.state.fork_refs
        entry.state = state
        entry.visible_tail = state.tail
        entry.pending = None
        entry.generation += 1
        entry.stale = False

    async def _load(self, path: str) -> Entry:
        state = await self._persistence.load_stream(path)
        if state is None:
            raise StreamNotFound()
        current = self._engine.entry_at(path)
        if current is not None:
            # Loaded by a concurrent request meanwhile.
            if current.state.stream_id == state.stream_id:
                return current
            self._engine.forget(current)
        return await self._adopt(state)

    async def _adopt(self, state: StreamState) -> Entry:
        """Hold a stream another process created (its fork source too)."""
        base: Entry | None = None
        if state.forked_from is not None:
            base = self._engine.entry_at(state.forked_from)
            if base is None or base.state.stream_id != state.forked_from_id:
                with contextlib.suppress(StreamNotFound):
                    base = await self._load(state.forked_from)
            if base is not None and base.state.stream_id != state.forked_from_id:
                base = None
        return self._engine.hold(state, base)

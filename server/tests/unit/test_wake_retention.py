"""Wake streams keep about their retained-bytes budget of newest events, however long they live."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

import pytest
from ds_server.live import LiveNotifier
from ds_server.stores._log_store import LogStore
from ds_server.stores.base import AppendRequest, CreateRequest
from ds_server.stores.errors import OffsetGone
from ds_server.stores.memory import MemoryPersistence
from ds_server.subscriptions.wake_retention import WakeStreamRetention

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

JSON = "application/json"
WAKES = "wakes/pool"
RETAIN = 16 * 1024
# Far below what the stream would write in a test: the limit counts what it keeps.
LIMIT = 64 * 1024


@pytest.fixture
async def store() -> AsyncIterator[LogStore]:
    live = LiveNotifier()
    live.bind(asyncio.get_running_loop())
    store = LogStore(live, MemoryPersistence(1 << 24), max_retained_bytes=LIMIT)
    await store.start()
    await store.create(CreateRequest(WAKES, JSON))
    yield store
    await store.stop()


async def _announce(store: LogStore, retention: WakeStreamRetention, n: int) -> int:
    """Append one wake event as the waker does; its start offset."""
    event = json.dumps({"subscription_id": "s", "wake_id": f"w-{n}", "pad": "x" * 150}).encode()
    result = await store.append(AppendRequest(WAKES, JSON, (event,)))
    await retention.appended(WAKES, result.tail - len(event), result.tail)
    return result.tail - len(event)


async def test_a_wake_stream_keeps_only_its_newest_events(store: LogStore) -> None:
    retention = WakeStreamRetention(store, RETAIN)
    starts = [await _announce(store, retention, n) for n in range(3000)]
    head = await store.head(WAKES)
    # ~600 kB written, ten times the stream limit: no append was refused.
    assert head.tail > 9 * LIMIT
    assert head.earliest_offset > 0
    assert head.retained_bytes <= RETAIN
    # The newest half of the budget is always readable, from an event's start.
    assert head.earliest_offset in starts
    assert head.earliest_offset <= head.tail - RETAIN // 2 - 200
    read = await store.read(WAKES, head.earliest_offset, LIMIT)
    assert len(read.chunks) == len([s for s in starts if s >= head.earliest_offset])
    with pytest.raises(OffsetGone):
        await store.read(WAKES, 0, LIMIT)


async def test_a_restarted_server_trims_too(store: LogStore) -> None:
    for n in range(200):
        await _announce(store, WakeStreamRetention(store, 1 << 30), n)
    # A new process knows no event starts: its first trim keeps the newest event.
    retention = WakeStreamRetention(store, RETAIN)
    start = await _announce(store, retention, 200)
    head = await store.head(WAKES)
    assert head.earliest_offset == start
    for n in range(201, 400):
        await _announce(store, retention, n)
    assert (await store.head(WAKES)).retained_bytes <= RETAIN

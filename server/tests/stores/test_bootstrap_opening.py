"""How a bootstrap begins (``stores/_bootstrap.py``) when a snapshot is published meanwhile.

The opening runs against a source that wraps a real store and publishes a
newer snapshot at one chosen step, so the race happens exactly there.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest
from ds_server.live import LiveNotifier
from ds_server.stores._bootstrap import open_bootstrap
from ds_server.stores._log_store import LogStore
from ds_server.stores.base import AppendRequest, CreateRequest
from ds_server.stores.memory import MemoryPersistence

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from ds_server.stores.base import ReadResult, Retention, SnapshotInfo, StreamInfo

TEXT = "text/plain"


class RacingSource:
    """The store, publishing a snapshot at ``offset`` when the opening reaches ``step``."""

    def __init__(self, store: LogStore, step: str, offset: int, blob: bytes) -> None:
        self.store = store
        self.race: tuple[str, int, bytes] | None = (step, offset, blob)

    async def _maybe_race(self, step: str, path: str) -> None:
        if self.race is not None and self.race[0] == step:
            _, offset, blob = self.race
            self.race = None
            await self.store.publish_snapshot(path, offset, TEXT, blob)

    async def head(self, path: str) -> StreamInfo:
        return await self.store.head(path)

    async def retain(self, path: str, start: int) -> Retention:
        await self._maybe_race("retain", path)
        return await self.store.retain(path, start)

    async def release(self, retention: Retention) -> None:
        await self.store.release(retention)

    async def read_snapshot(self, path: str, offset: int) -> tuple[SnapshotInfo, bytes]:
        await self._maybe_race("read_snapshot", path)
        return await self.store.read_snapshot(path, offset)

    async def read_messages(
        self, path: str, start: int, max_bytes: int, *, retention: Retention | None = None
    ) -> ReadResult:
        return await self.store.read_messages(path, start, max_bytes, retention=retention)


@pytest.fixture
async def store() -> AsyncIterator[LogStore]:
    live = LiveNotifier()
    live.bind(asyncio.get_running_loop())
    store = LogStore(live, MemoryPersistence(1 << 24), max_retained_bytes=1 << 20)
    await store.start()
    await store.create(CreateRequest(path="s", content_type=TEXT))
    for text in (b"a", b"b", b"c"):
        await store.append(AppendRequest(path="s", content_type=TEXT, messages=(text,)))
    yield store
    await store.stop()


@pytest.mark.parametrize(
    ("step", "had_snapshot"),
    [("retain", False), ("retain", True), ("read_snapshot", True)],
)
async def test_a_snapshot_published_while_a_bootstrap_opens_is_the_one_served(
    store: LogStore, step: str, had_snapshot: bool
) -> None:
    if had_snapshot:
        await store.publish_snapshot("s", 1, TEXT, b"old")
    begun = await open_bootstrap(RacingSource(store, step, 2, b"new"), "s", 1024)
    assert (begun.snapshot, begun.start) == (b"new", 2)
    assert begun.first_page is not None
    assert begun.first_page.chunks == [b"c"]
    # Only the hold of the bootstrap that began is left, until it is released.
    assert store.snapshots.holds() == 1
    await store.release(begun.retention)
    assert store.snapshots.holds() == 0


async def test_a_stream_without_a_snapshot_begins_with_an_empty_part(store: LogStore) -> None:
    begun = await store.begin_bootstrap("s", 1024)
    assert (begun.snapshot, begun.snapshot_type, begun.start) == (
        b"",
        "application/octet-stream",
        0,
    )
    assert begun.first_page is not None
    assert begun.first_page.chunks == [b"a", b"b", b"c"]
    await store.release(begun.retention)

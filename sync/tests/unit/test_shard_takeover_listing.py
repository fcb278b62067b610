"""Shards taken over list the streams again, but not those taken before the start-up listing."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ds_sync.metrics import Metrics
from ds_sync.options import component_options
from ds_sync.sessions.streams import Streams
from ds_sync.settings import Settings

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable


def _streams() -> Streams:
    settings = Settings(
        server_url="http://ds-server",
        postgres_url="postgresql://nowhere/db",
        streams="b/*",
        shards=4,
    )
    streams = Streams(component_options(settings).readers, None, None, None, Metrics())  # type: ignore[arg-type]
    streams.load({})

    async def no_checkpoints(shards: set[int]) -> None:
        return None

    streams._take_over_shards = no_checkpoints  # type: ignore[method-assign]
    return streams


def _listing(listings: list[str]) -> Callable[[], Awaitable[None]]:
    async def rescan() -> None:
        listings.append("listed")

    return rescan


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_shards_taken_before_the_start_up_listing_are_not_listed_again() -> None:
    listings: list[str] = []
    streams = _streams()
    try:
        streams.shards_gained({0, 1, 2, 3})
        # Start-up lists every stream, then enables listings on take-over; on a busy
        # machine the take-over task only runs after that.
        streams.rescan = _listing(listings)
        await _settle()
        assert listings == []
    finally:
        await streams.stop()


async def test_a_shard_taken_over_later_is_listed() -> None:
    listings: list[str] = []
    streams = _streams()
    try:
        streams.rescan = _listing(listings)
        streams.shards_gained({2})
        await _settle()
        assert listings == ["listed"]
    finally:
        await streams.stop()

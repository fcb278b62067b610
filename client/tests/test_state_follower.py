"""StateFollower against a real server: bootstrap, tail, resume, and a rebuild after 410."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import TYPE_CHECKING

import httpx
from durable_sessions import AsyncIdempotentProducer, StateFollower, publish_snapshot
from durable_sessions.state import change, control

if TYPE_CHECKING:
    from collections.abc import Callable

    from durable_sessions import StateBatch


async def _write(url: str, *messages: object) -> str:
    async with AsyncIdempotentProducer(url, uuid.uuid4().hex) as producer:
        for message in messages:
            producer.append(message)
        await producer.flush()
        offset = producer.last_successful_offset
    assert offset is not None
    return offset


async def _until(
    follower: StateFollower, done: Callable[[StateBatch], bool], within: float = 20
) -> list[StateBatch]:
    seen: list[StateBatch] = []

    async def run() -> None:
        async for batch in follower:
            seen.append(batch)
            if done(batch):
                return

    await asyncio.wait_for(run(), within)
    return seen


async def test_follow_from_the_bootstrap_then_live(new_stream: Callable[..., str]) -> None:
    url = new_stream()
    await _write(url, change("item", "1", {"n": 1}), change("item", "2", {"n": 2}))
    async with StateFollower(url) as follower:
        seen = await _until(follower, lambda batch: batch.up_to_date)
        assert seen[0].rebuilt
        assert follower.state.get_type("item") == {"1": {"n": 1}, "2": {"n": 2}}
        await _write(url, change("item", "1", None, operation="delete"))
        # The same follower goes on live from where it stopped.
        await _until(follower, lambda batch: follower.state.get("item", "1") is None)
        assert follower.state.get_type("item") == {"2": {"n": 2}}


async def test_resume_from_an_offset(new_stream: Callable[..., str]) -> None:
    url = new_stream()
    offset = await _write(url, change("item", "1", {"n": 1}))
    await _write(url, change("item", "2", {"n": 2}))
    async with StateFollower(url, offset=offset) as follower:
        await _until(follower, lambda batch: batch.up_to_date and bool(batch.messages))
    # Only what came after the offset was applied.
    assert follower.state.to_dict() == {"item": {"2": {"n": 2}}}


async def test_a_410_rebuilds_from_the_snapshot(new_stream: Callable[..., str]) -> None:
    url = new_stream()
    first = await _write(url, change("item", "1", {"n": 1}))
    cut = await _write(url, change("item", "2", {"n": 2}), control("reset"), change("item", "3", 3))
    await _write(url, change("item", "4", 4))
    snapshot = [control("snapshot-start"), change("item", "3", 3), control("snapshot-end")]
    await publish_snapshot(url, cut, json.dumps(snapshot).encode(), content_type="application/json")
    # A follower that stood before the snapshot gets 410, then rebuilds from scratch.
    async with StateFollower(url, offset=first) as follower:
        follower.state.apply(change("item", "stale", "gone after the rebuild"))
        seen = await _until(follower, lambda batch: batch.rebuilt)
    assert seen[-1].rebuilt
    assert follower.state.to_dict() == {"item": {"3": 3, "4": 4}}


async def test_a_top_level_stream_is_followed_from_its_start(server_url: str) -> None:
    """pg-{table} streams have one segment: where the server serves no bootstrap for them,
    the follower reads from the beginning (where it does, from the bootstrap: the same state)."""
    url = f"{server_url}/v1/stream/top-{uuid.uuid4().hex[:10]}"
    async with httpx.AsyncClient() as http:
        response = await http.put(url, headers={"Content-Type": "application/json"})
        assert response.status_code == 201
    await _write(url, change("item", "1", 1), change("item", "2", 2))
    async with StateFollower(url) as follower:
        await _until(follower, lambda batch: batch.up_to_date and follower.state.type_count > 0)
    assert follower.state.to_dict() == {"item": {"1": 1, "2": 2}}

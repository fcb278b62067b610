"""Following a session through Envoy: typed events live, each with its exact offsets,
from a bootstrap (snapshot included), from a checkpoint, and again after a 410."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import TYPE_CHECKING

from durable_sessions.sessions import (
    AsyncSessionWriter,
    ChunkEvent,
    MessageEvent,
    SessionFollower,
    SessionState,
    load_session,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from durable_sessions.sessions import SessionBatch, SessionEvent
    from sdk_stack import SdkStack


async def test_a_follower_sees_a_reply_grow_chunk_by_chunk(sdk_stack: SdkStack) -> None:
    url = sdk_stack.new_session()
    seen: list[SessionEvent] = []
    texts: list[str] = []
    grown, finished = asyncio.Event(), asyncio.Event()

    async def follow(follower: SessionFollower) -> None:
        async for batch in follower:
            seen.extend(batch.events)
            message = follower.state.message("r")
            if message is not None and message.text not in texts[-1:]:
                texts.append(message.text)
                grown.set()
            if any(isinstance(event, MessageEvent) for event in batch.events):
                finished.set()

    async def model() -> AsyncIterator[str]:
        # The next word only once the follower has shown the last one.
        for word in ["one ", "two ", "three"]:
            grown.clear()
            yield word
            await asyncio.wait_for(grown.wait(), 30)

    follower = SessionFollower(url, token=sdk_stack.token)
    task = asyncio.create_task(follow(follower))
    async with AsyncSessionWriter(url, token=sdk_stack.token) as writer:
        reply = await writer.stream_reply(model(), message_id="r", author="bot")
        await writer.flush()
        await asyncio.wait_for(finished.wait(), 30)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    await follower.aclose()
    assert texts[:3] == ["one ", "one two ", "one two three"]
    assert [type(e) for e in seen] == [ChunkEvent] * 3 + [MessageEvent]
    assert follower.state.message("r") is not None
    assert follower.state.messages()[0].streaming is False
    assert reply.text == "one two three"


async def test_each_event_knows_where_it_starts_and_ends(sdk_stack: SdkStack) -> None:
    url = sdk_stack.new_session()
    async with AsyncSessionWriter(url, token=sdk_stack.token) as writer:
        for n in range(5):
            writer.message(f"message {n} " + "é" * n, author="user:alice", message_id=str(n))
    state = await load_session(url, token=sdk_stack.token)
    offsets = [m.offset for m in state.messages()]
    assert None not in offsets
    # A read from a message's offset starts with that message.
    with sdk_stack.client() as http:
        for n, offset in enumerate(offsets):
            first = json.loads(http.get(url, params={"offset": offset}).content)[0]
            assert first["key"] == f"msg:{n}"
        assert state.offset == http.head(url).headers["Stream-Next-Offset"]


async def test_resume_from_a_checkpoint_reads_only_what_came_after(sdk_stack: SdkStack) -> None:
    url = sdk_stack.new_session()
    async with AsyncSessionWriter(url, token=sdk_stack.token) as writer:
        writer.message("before", author="user:alice", message_id="1")
    saved = await load_session(url, token=sdk_stack.token)
    assert saved.offset is not None
    async with AsyncSessionWriter(url, token=sdk_stack.token) as writer:
        writer.message("after", author="user:bob", message_id="2")
        writer.producer.append({"type": "note", "key": "n", "operation": "set", "value": 1})
    batches: list[SessionBatch] = []
    async with SessionFollower(url, offset=saved.offset, state=saved, token=sdk_stack.token) as f:
        async for batch in f:
            batches.append(batch)
            if batch.up_to_date:
                break
    events = [e for b in batches for e in b.events]
    assert not any(b.rebuilt for b in batches)
    assert [type(e).__name__ for e in events] == ["MessageEvent", "SessionEvent"]
    assert isinstance(events[0], MessageEvent)
    assert events[0].text == "after"
    assert [m.text for m in f.state.messages()] == ["before", "after"]


async def test_a_snapshot_is_where_the_state_starts_and_a_410_rebuilds(sdk_stack: SdkStack) -> None:
    url = sdk_stack.new_session()
    async with AsyncSessionWriter(url, token=sdk_stack.token) as writer:
        writer.message("first", author="user:alice", message_id="1")
        await writer.flush()
        checkpoint = writer.last_offset
        writer.message("second", author="user:alice", message_id="2")
    assert checkpoint is not None
    early = SessionState()
    async with SessionFollower(url, token=sdk_stack.token) as follower:
        async for batch in follower:
            if batch.up_to_date:
                break
    assert [m.text for m in follower.state.messages()] == ["first", "second"]

    # Compact everything before the checkpoint into a snapshot that says so.
    document = {
        "format": "ds-session-state/1",
        "offset": checkpoint,
        "state": {"message": {"msg:1": {"role": "user", "text": "from the snapshot"}}},
    }
    with sdk_stack.client() as http:
        published = http.put(
            f"{url}/snapshot/{checkpoint}",
            content=json.dumps(document),
            headers={"Content-Type": "application/json"},
        )
        assert published.status_code == 204, published.text
    state = await load_session(url, token=sdk_stack.token)
    assert [(m.text, m.offset is None) for m in state.messages()] == [
        ("from the snapshot", True),
        ("second", False),
    ]
    # A reader behind the snapshot is answered 410 and starts over from the bootstrap.
    async with SessionFollower(url, offset="-1", state=early, token=sdk_stack.token) as late:
        async for batch in late:
            if batch.up_to_date:
                break
    assert batch.rebuilt
    assert [m.text for m in late.state.messages()] == ["from the snapshot", "second"]

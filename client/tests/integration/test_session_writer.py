"""Writing a session through Envoy: every event in the contract's shapes, exactly once,
and read back by the fold as the chat it is."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from durable_sessions.sessions import (
    AsyncSessionWriter,
    SessionWriter,
    create_session,
    fields_of,
    load_session,
    session_url,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from sdk_stack import SdkStack


async def fake_model(words: list[str]) -> AsyncIterator[str]:
    for word in words:
        yield word


async def test_a_conversation_is_written_and_read_back(sdk_stack: SdkStack) -> None:
    url = sdk_stack.new_session()
    assert not await create_session(url, token=sdk_stack.token)  # it exists: nothing to do
    fresh = session_url(sdk_stack.url, "fresh", bucket=sdk_stack.new_bucket())
    assert await create_session(fresh, token=sdk_stack.token)
    async with AsyncSessionWriter(url, token=sdk_stack.token) as writer:
        writer.join("alice")
        writer.typing("alice")
        writer.typing("alice")  # within the refresh interval: not written again
        question = writer.message("What is a durable stream?", author="user:alice")
        writer.stop_typing("alice")
        reply = await writer.stream_reply(fake_model(["An ", "append-only ", "log."]))
        writer.react(question, "bob", "👍")
        writer.edit(question, "What is a durable stream, briefly?", author="user:alice")
        await writer.flush()
        state = await load_session(url, token=sdk_stack.token)
        assert state.online() == ["alice"]
    assert (reply.text, reply.chunks) == ("An append-only log.", 3)

    stored = sdk_stack.read_json(url)
    shapes = [(e["type"], fields_of(e).kind) for e in stored]
    assert shapes == [
        ("presence", "upsert"),
        ("typing", "upsert"),
        ("message", "upsert"),
        ("typing", "delete"),
        *[("chunk", "append")] * 3,
        ("message", "upsert"),
        ("reaction", "upsert"),
        ("message", "upsert"),
        ("presence", "upsert"),  # close() said alice left
    ]
    assert all(fields_of(e).time is not None for e in stored)
    assert stored[-1]["value"] == {"status": "offline"}

    state = await load_session(url, token=sdk_stack.token)
    assert [(m.id, m.role, m.text, m.edited) for m in state.messages()] == [
        (question, "user", "What is a durable stream, briefly?", True),
        (reply.id, "assistant", "An append-only log.", False),
    ]
    assert state.messages()[0].reactions == {"👍": ["bob"]}
    assert state.online() == []
    assert state.typing() == []


async def test_a_failing_model_still_leaves_a_finished_message(sdk_stack: SdkStack) -> None:
    url = sdk_stack.new_session()

    async def failing() -> AsyncIterator[str]:
        yield "Half an "
        raise RuntimeError("the model went away")

    async with AsyncSessionWriter(url, token=sdk_stack.token) as writer:
        with pytest.raises(RuntimeError, match="went away"):
            await writer.stream_reply(failing(), message_id="r1")
    state = await load_session(url, token=sdk_stack.token)
    [message] = state.messages()
    assert (message.id, message.text, message.streaming) == ("r1", "Half an ", False)


async def test_end_session_closes_the_stream(sdk_stack: SdkStack) -> None:
    url = sdk_stack.new_session()
    writer = AsyncSessionWriter(url, token=sdk_stack.token)
    writer.message("bye", author="user:alice")
    await writer.close(end_session=True)
    await writer.close()  # idempotent
    with sdk_stack.client() as http:
        assert http.head(url).headers["Stream-Closed"] == "true"


async def test_the_synchronous_writer(sdk_stack: SdkStack) -> None:
    url = sdk_stack.new_session()
    with SessionWriter(url, token=sdk_stack.token) as writer:
        writer.join("carol", "away")
        first = writer.message("hello", author="user:carol")
        reply = writer.stream_reply(iter(["Hi ", "carol"]), author="bot")
        writer.react(first, "carol", "🎉")
        writer.unreact(first, "carol", "🎉")
        writer.delete(first)
        writer.flush()
        assert writer.last_offset is not None

        def broken() -> AsyncIterator[str]:  # a sync generator, typed loosely for the test
            yield "part"  # type: ignore[misc]
            raise ValueError("stop")

        with pytest.raises(ValueError, match="stop"):
            writer.stream_reply(broken(), message_id="b")  # type: ignore[arg-type]
    writer.close()  # idempotent
    state = await load_session(url, token=sdk_stack.token)
    shown = [(m.author, m.text) for m in state.messages()]
    assert shown == [("bot", "Hi carol"), ("assistant", "part")]
    assert reply.text == "Hi carol"
    assert state.online() == []
    assert [p.status for p in state.presence()] == ["offline"]

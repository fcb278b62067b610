"""Edit and regenerate: a session forked before a message, rewritten in the fork."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import pytest
from durable_sessions.sessions import (
    AsyncSessionWriter,
    create_session,
    fork_session,
    load_session,
    session_url,
)
from durable_streams import DurableStreamError

if TYPE_CHECKING:
    from sdk_stack import SdkStack


async def test_edit_and_regenerate_in_a_fork(sdk_stack: SdkStack) -> None:
    bucket = sdk_stack.new_bucket()
    original = session_url(sdk_stack.url, f"room-{uuid.uuid4().hex[:8]}", bucket=bucket)
    await create_session(original, token=sdk_stack.token)
    async with AsyncSessionWriter(original, token=sdk_stack.token) as writer:
        writer.message("Hello", author="user:alice", message_id="1")
        await writer.stream_reply(["Hi ", "alice"], message_id="2")
        writer.message("Wht is a stream?", author="user:alice", message_id="3")
        await writer.stream_reply(["Sorry, what?"], message_id="4")
    typo = (await load_session(original, token=sdk_stack.token)).message("3")
    assert typo is not None
    assert typo.offset is not None

    fork = session_url(sdk_stack.url, f"room-{uuid.uuid4().hex[:8]}", bucket=bucket)
    assert await fork_session(original, fork, offset=typo.offset, token=sdk_stack.token)
    # A retry of the same fork is no error; the same name forked elsewhere is.
    assert not await fork_session(original, fork, offset=typo.offset, token=sdk_stack.token)
    async with AsyncSessionWriter(fork, token=sdk_stack.token) as writer:
        writer.message("What is a stream?", author="user:alice", message_id="3")
        await writer.stream_reply(["An append-only log."], message_id="4")

    rewritten = await load_session(fork, token=sdk_stack.token)
    assert [m.text for m in rewritten.messages()] == [
        "Hello",
        "Hi alice",
        "What is a stream?",
        "An append-only log.",
    ]
    untouched = await load_session(original, token=sdk_stack.token)
    assert [m.text for m in untouched.messages()][2:] == ["Wht is a stream?", "Sorry, what?"]

    with pytest.raises(DurableStreamError) as taken:
        await fork_session(original, fork, offset=untouched.offset, token=sdk_stack.token)
    assert taken.value.status == 409
    # An offset that is no message boundary is refused.
    inside = str(int(typo.offset) + 1).zfill(20)
    elsewhere = session_url(sdk_stack.url, f"room-{uuid.uuid4().hex[:8]}", bucket=bucket)
    with pytest.raises(DurableStreamError) as refused:
        await fork_session(original, elsewhere, offset=inside, token=sdk_stack.token)
    assert refused.value.status == 400


async def test_a_fork_at_the_tail_copies_everything(sdk_stack: SdkStack) -> None:
    bucket = sdk_stack.new_bucket()
    original = session_url(sdk_stack.url, "a", bucket=bucket)
    await create_session(original, token=sdk_stack.token)
    async with AsyncSessionWriter(original, token=sdk_stack.token) as writer:
        writer.message("kept", author="user:alice")
    copy = session_url(sdk_stack.url, "b", bucket=bucket)
    await fork_session(original, copy, token=sdk_stack.token)
    assert [m.text for m in (await load_session(copy, token=sdk_stack.token)).messages()] == [
        "kept"
    ]
    with pytest.raises(ValueError, match="same server"):
        await fork_session(original, "http://elsewhere.invalid/ds/x/y", token=sdk_stack.token)

"""A session folded and read as a chat: messages, replies, edits, reactions, who is there."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from durable_sessions.sessions import (
    Participant,
    SessionState,
    chunk_event,
    deleted_message_event,
    message_event,
    presence_event,
    reaction_event,
    stopped_typing_event,
    typing_event,
)

AT = datetime(2026, 11, 26, 10, 0, tzinfo=UTC)


def _offset(n: int) -> str:
    return str(n).zfill(20)


def test_messages_in_order_with_the_whole_reply() -> None:
    state = SessionState()
    events = [
        message_event("1", "What is a stream?", role="user", author="user:alice", at=AT),
        chunk_event("2", "An append-only ", 0, at=AT),
        chunk_event("2", "log.", 1, at=AT),
        message_event("3", "draft", role="user", author="user:bob", at=AT),
    ]
    for n, event in enumerate(events):
        state.apply(event, offset=_offset(n * 10), next_offset=_offset(n * 10 + 10))
    first, reply, _ = state.messages()
    assert (first.id, first.text, first.author, first.streaming) == (
        "1",
        "What is a stream?",
        "user:alice",
        False,
    )
    assert (reply.text, reply.role, reply.streaming, reply.offset) == (
        "An append-only log.",
        "assistant",
        True,
        _offset(10),
    )
    assert state.offset == _offset(40)

    state.apply(
        message_event("2", "An append-only log.", role="assistant", author="bot", edit=True)
    )
    state.apply(message_event("3", "final", role="user", author="user:bob", edit=True))
    state.apply(reaction_event("1", "bob", "👍"))
    state.apply(reaction_event("1", "carol", "👍"))
    state.apply(reaction_event("1", "carol", "🎉"))
    state.apply(reaction_event("1", "carol", "🎉", remove=True))
    _, reply, edited = state.messages()
    assert (reply.streaming, reply.author, reply.edited) == (False, "bot", False)
    assert (edited.text, edited.edited, edited.offset) == ("final", True, _offset(30))
    assert state.message("1") is not None
    assert state.message("1").reactions == {"👍": ["bob", "carol"]}  # type: ignore[union-attr]

    state.apply(deleted_message_event("1"))
    assert [m.id for m in state.messages()] == ["2", "3"]
    assert state.message("1") is None


def test_a_message_from_a_snapshot_has_no_offset_to_fork_at() -> None:
    state = SessionState()
    state.apply(message_event("1", "a", role="user", author="u", at=AT), offset=_offset(0))
    resumed = SessionState()
    resumed.load_snapshot(
        {"format": "ds-session-state/1", "offset": _offset(9), "state": state.to_dict()}
    )
    assert resumed.offset == _offset(9)
    resumed.apply(chunk_event("1", "b", 0), offset=_offset(9), next_offset=_offset(20))
    assert [(m.text, m.offset, m.streaming) for m in resumed.messages()] == [("ab", None, True)]
    assert resumed.snapshot()["offset"] == _offset(20)


def test_presence_and_typing_expire_unless_refreshed() -> None:
    state = SessionState()
    ttl = timedelta(seconds=30)
    state.apply(presence_event("alice", at=AT, ttl=ttl))
    state.apply(presence_event("bob", "away", at=AT, ttl=ttl))
    state.apply(presence_event("carol", "offline", at=AT))
    state.apply({"type": "presence", "key": "user:dave", "operation": "set", "value": {}})
    state.apply(typing_event("bob", at=AT, ttl=timedelta(seconds=10)))
    state.apply({"type": "typing", "key": "user:erin", "operation": "set", "value": {}})

    assert state.online(AT) == ["alice", "bob", "dave"]
    assert state.typing(AT) == ["bob", "erin"]
    later = AT + timedelta(seconds=30)
    assert state.online(later) == ["dave"]
    assert state.typing(later) == ["erin"]
    assert state.presence(later)[0] == Participant(
        user="dave", status=None, online=True, expired=False, expires_at=None
    )
    alice = next(p for p in state.presence(later) if p.user == "alice")
    assert (alice.online, alice.expired, alice.status) == (False, True, "online")

    # A refresh moves the deadline; an explicit stop ends typing at once.
    state.apply(presence_event("alice", at=later, ttl=ttl))
    state.apply(stopped_typing_event("erin"))
    assert state.online(later) == ["alice", "dave"]
    assert state.typing(later) == []


def test_a_snapshot_needs_an_offset() -> None:
    state = SessionState()
    state.apply(message_event("1", "a", role="user", author="u"))
    with pytest.raises(ValueError, match="offset"):
        state.snapshot()
    state.clear()
    assert state.to_dict() == {}

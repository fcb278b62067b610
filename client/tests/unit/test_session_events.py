"""Stream messages read as typed session events, in both accepted shapes."""

from __future__ import annotations

from datetime import UTC, datetime

from durable_sessions.sessions import (
    ChunkEvent,
    MessageEvent,
    PresenceEvent,
    ReactionEvent,
    SessionEvent,
    TypingEvent,
    parse_event,
)


def test_each_known_type_reads_as_its_class() -> None:
    message = parse_event(
        {
            "type": "message",
            "key": "msg:42",
            "value": {"role": "user", "text": "hi", "author": "user:alice"},
            "headers": {"operation": "insert", "timestamp": "2026-11-26T10:00:00.125Z"},
        },
        offset="00000000000000000000",
        next_offset="00000000000000000120",
    )
    assert isinstance(message, MessageEvent)
    assert (message.message_id, message.role, message.text, message.author) == (
        "42",
        "user",
        "hi",
        "user:alice",
    )
    assert message.time == datetime(2026, 11, 26, 10, 0, 0, 125000, tzinfo=UTC)
    assert (message.offset, message.next_offset, message.deleted) == (
        "00000000000000000000",
        "00000000000000000120",
        False,
    )
    chunk = parse_event(
        {"type": "chunk", "key": "msg:7", "operation": "append", "value": {"text": "x", "index": 3}}
    )
    assert isinstance(chunk, ChunkEvent)
    assert (chunk.message_id, chunk.text, chunk.index, chunk.kind) == ("7", "x", 3, "append")
    presence = parse_event(
        {
            "type": "presence",
            "key": "user:alice",
            "operation": "set",
            "value": {"status": "away", "expires_at": "2026-11-26T10:01:00Z"},
            "timestamp": "2026-11-26T10:00:00Z",
        }
    )
    assert isinstance(presence, PresenceEvent)
    assert (presence.user, presence.status) == ("alice", "away")
    assert presence.expires_at == datetime(2026, 11, 26, 10, 1, tzinfo=UTC)
    typing = parse_event({"type": "typing", "key": "user:bob", "operation": "remove"})
    assert isinstance(typing, TypingEvent)
    assert (typing.user, typing.deleted, typing.expires_at) == ("bob", True, None)
    reaction = parse_event(
        {"type": "reaction", "key": "reaction:42:bob:+1", "headers": {"operation": "insert"}}
    )
    assert isinstance(reaction, ReactionEvent)
    assert (reaction.message_id, reaction.user, reaction.emoji) == ("42", "bob", "+1")


def test_anything_else_is_kept_as_a_plain_event() -> None:
    for message in (
        {"headers": {"control": "reset"}},
        {"type": "note", "key": "n", "operation": "set", "value": 1},
        {"type": "reaction", "key": "not-a-reaction", "operation": "set"},
        "text",
        {"type": "message"},
    ):
        event = parse_event(message)
        assert type(event) is SessionEvent
        assert event.message == message


def test_fields_of_the_wrong_type_read_as_nothing() -> None:
    event = parse_event(
        {
            "type": "message",
            "key": "msg:1",
            "operation": "set",
            "value": {"role": 7, "text": ["x"], "author": None},
        }
    )
    assert isinstance(event, MessageEvent)
    assert (event.role, event.text, event.author) == (None, "", None)
    chunk = parse_event(
        {"type": "chunk", "key": "msg:1", "operation": "append", "value": {"index": True}}
    )
    assert isinstance(chunk, ChunkEvent)
    assert chunk.index is None

"""The events the SDK writes: change messages in the contract's shapes, read back by §2."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from durable_sessions.sessions import (
    chunk_event,
    deleted_message_event,
    fields_of,
    message_event,
    presence_event,
    reaction_event,
    stopped_typing_event,
    typing_event,
)

AT = datetime(2026, 11, 26, 10, 0, 0, 125000, tzinfo=UTC)
STAMP = "2026-11-26T10:00:00.125Z"


def test_a_message_is_inserted_and_edited_with_updates() -> None:
    first = message_event("1", "hi", role="user", author="user:alice", at=AT)
    assert first == {
        "type": "message",
        "key": "msg:1",
        "value": {"role": "user", "text": "hi", "author": "user:alice"},
        "headers": {"operation": "insert", "timestamp": STAMP},
    }
    edit = message_event("1", "hey", role="user", author="user:alice", edit=True, at=AT)
    assert edit["headers"]["operation"] == "update"
    assert fields_of(edit).kind == fields_of(first).kind == "upsert"
    gone = deleted_message_event("1", at=AT)
    assert gone == {
        "type": "message",
        "key": "msg:1",
        "headers": {"operation": "delete", "timestamp": STAMP},
    }
    with pytest.raises(ValueError, match="role"):
        message_event("1", "x", role="robot", author="a")  # type: ignore[arg-type]


def test_a_chunk_is_an_append_under_its_message_key() -> None:
    chunk = chunk_event("2", "Hel", 0, at=AT)
    assert chunk["value"] == {"role": "assistant", "text": "Hel", "index": 0}
    fields = fields_of(chunk)
    assert (fields.type, fields.key, fields.kind, fields.time) == ("chunk", "msg:2", "append", AT)


def test_presence_and_typing_carry_their_deadline() -> None:
    online = presence_event("alice", at=AT)
    assert online["value"] == {"status": "online", "expires_at": "2026-11-26T10:01:00.125Z"}
    assert fields_of(online).kind == "upsert"
    away = presence_event("alice", "away", ttl=timedelta(seconds=5), at=AT)
    assert away["value"]["expires_at"] == "2026-11-26T10:00:05.125Z"
    # Offline needs no deadline: it is already what expiry would make it.
    assert presence_event("alice", "offline", at=AT)["value"] == {"status": "offline"}
    assert typing_event("bob", at=AT)["value"] == {"expires_at": "2026-11-26T10:00:10.125Z"}
    assert fields_of(stopped_typing_event("bob", at=AT)).kind == "delete"
    with pytest.raises(ValueError, match="status"):
        presence_event("alice", "busy")  # type: ignore[arg-type]


def test_reactions_are_set_and_taken_back() -> None:
    added = reaction_event("1", "bob", "👍", at=AT)
    assert (added["key"], added["value"]) == ("reaction:1:bob:👍", {"emoji": "👍"})
    removed = reaction_event("1", "bob", "👍", remove=True, at=AT)
    assert "value" not in removed
    assert fields_of(removed).kind == "delete"

"""Session event keys, written and read back."""

from __future__ import annotations

import pytest
from durable_sessions.sessions import (
    ReactionKey,
    message_key,
    parse_reaction_key,
    reaction_key,
    user_key,
)


def test_keys_are_spelled_as_the_contract_says() -> None:
    assert message_key("42") == "msg:42"
    assert user_key("alice") == "user:alice"
    assert reaction_key("42", "alice", "👍") == "reaction:42:alice:👍"


@pytest.mark.parametrize(
    ("message_id", "user", "emoji"),
    [("", "a", "x"), ("a:b", "c", "x"), ("a", "b:c", "x"), ("a", "b", "")],
)
def test_a_reaction_key_that_would_not_read_back_is_refused(
    message_id: str, user: str, emoji: str
) -> None:
    with pytest.raises(ValueError, match=r"reaction key|non-empty"):
        reaction_key(message_id, user, emoji)


def test_reaction_keys_read_back_as_the_viewer_reads_them() -> None:
    assert parse_reaction_key("reaction:42:alice:👍") == ReactionKey("42", "alice", "👍")
    assert parse_reaction_key("reaction:msg:42:alice:+1") == ReactionKey("42", "alice", "+1")
    assert parse_reaction_key("reaction:42:alice:a:b") == ReactionKey("42", "alice", "a:b")
    assert parse_reaction_key("reaction:42:bob", {"emoji": "🎉"}) == ReactionKey("42", "bob", "🎉")
    assert parse_reaction_key("reaction:42") is None
    assert parse_reaction_key("presence:42:alice:x") is None

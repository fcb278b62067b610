"""Stream patterns: the server's glob grammar, and which can be listed."""

from __future__ import annotations

import pytest
from durable_sessions.protocol import Pattern, PatternError, any_matches, parse_patterns


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("sessions/*", "sessions/room-1", True),
        ("sessions/*", "/sessions/room-1", True),
        ("sessions/*", "sessions", False),
        ("sessions/*", "sessions/a/b", False),
        ("sessions/*", "other/room-1", False),
        ("session-events", "session-events", True),
        ("session-events", "session-events-2", False),
        ("**", "a/b/c", True),
        ("a/**", "a", True),
        ("a/**/z", "a/b/c/z", True),
        ("a/**/z", "a/z", True),
        ("a/**/z", "a/b/c", False),
        ("*/x", "b/x", True),
        ("*", "pg-items", True),
        ("*", "a/b", False),
    ],
)
def test_matching(pattern: str, path: str, matches: bool) -> None:
    assert Pattern(pattern).matches(path) is matches


def test_listing_needs_a_literal_or_one_bucket() -> None:
    literal, bucket = parse_patterns("session-events,sessions/*")
    assert literal.literal
    assert literal.listable
    assert literal.bucket is None
    assert bucket.bucket == "sessions"
    assert bucket.listable
    assert Pattern("a/b").bucket == "a"  # a literal stream in a bucket: listed too
    for unlistable in ("a/**", "*/x", "**", "a/*/c"):
        assert not Pattern(unlistable).listable, unlistable


@pytest.mark.parametrize(
    "text", ["room-*", "a//b", "a/../b", "a/./b", "__ds/x", " , ", "", "a/b**"]
)
def test_bad_patterns(text: str) -> None:
    with pytest.raises(PatternError):
        parse_patterns(text)


def test_spaces_slashes_and_duplicates() -> None:
    assert parse_patterns(" /sessions/* , sessions/*,x ") == (Pattern("sessions/*"), Pattern("x"))
    assert any_matches(parse_patterns("a,b/*"), "b/c")
    assert not any_matches(parse_patterns("a,b/*"), "c")


def test_readers_that_list_refuse_patterns_they_cannot_list() -> None:
    assert parse_patterns("a,b/*,b/c", listable=True) == (
        Pattern("a"),
        Pattern("b/*"),
        Pattern("b/c"),
    )
    with pytest.raises(PatternError, match="'a/\\*\\*' cannot be listed"):
        parse_patterns("x,a/**", listable=True)
    assert parse_patterns("a/**") == (Pattern("a/**"),)  # a subscription may take it

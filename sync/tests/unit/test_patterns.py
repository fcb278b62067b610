"""DS_SYNC__STREAMS patterns: the server's glob grammar, and which can be listed."""

from __future__ import annotations

import pytest
from ds_sync.patterns import Pattern, PatternError, any_matches, parse_patterns


def test_default_patterns() -> None:
    literal, bucket = parse_patterns("session-events,sessions/*")
    assert literal.literal
    assert literal.bucket is None
    assert not bucket.literal
    assert bucket.bucket == "sessions"


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("sessions/*", "sessions/room-1", True),
        ("sessions/*", "sessions", False),
        ("sessions/*", "sessions/a/b", False),
        ("sessions/*", "other/room-1", False),
        ("session-events", "session-events", True),
        ("session-events", "session-events-2", False),
        ("**", "a/b/c", True),
        ("a/**", "a", True),
        ("a/**/z", "a/b/c/z", True),
        ("*/x", "b/x", True),
    ],
)
def test_matching(pattern: str, path: str, matches: bool) -> None:
    assert Pattern(pattern).matches(path) is matches


def test_listable_only_as_bucket_and_one_segment() -> None:
    assert Pattern("a/**").bucket is None
    assert Pattern("*/x").bucket is None
    assert Pattern("a/b").bucket == "a"  # a literal stream in a bucket: listed too
    assert Pattern("a/b").literal


@pytest.mark.parametrize("text", ["room-*", "a//b", "a/../b", "__ds/x", " , ", ""])
def test_bad_patterns(text: str) -> None:
    with pytest.raises(PatternError):
        parse_patterns(text)


def test_spaces_slashes_and_duplicates() -> None:
    assert parse_patterns(" /sessions/* , sessions/*,x ") == (Pattern("sessions/*"), Pattern("x"))
    assert any_matches(parse_patterns("a,b/*"), "b/c")

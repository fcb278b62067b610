"""Subscription globs: "*" is one segment, "**" any number."""

from __future__ import annotations

import pytest
from ds_server.subscriptions.patterns import matches, pattern_problem


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("events/*", "events/x", True),
        ("events/*", "events/x/y", False),
        ("events/*", "events", False),
        ("events/*", "other/x", False),
        ("events/**", "events", True),
        ("events/**", "events/x/y/z", True),
        ("**", "anything/at/all", True),
        ("**/leaf", "leaf", True),
        ("**/leaf", "a/b/leaf", True),
        ("**/leaf", "a/b/leaf/no", False),
        ("a/**/z", "a/z", True),
        ("a/**/z", "a/b/c/z", True),
        ("a/*/z", "a/b/c/z", False),
        ("exact/path", "exact/path", True),
        ("exact/path", "exact/pathx", False),
        ("/events/*/", "events/x", True),
    ],
)
def test_matches(pattern: str, path: str, expected: bool) -> None:
    assert matches(pattern, path) is expected


@pytest.mark.parametrize("pattern", ["events/*", "**", "a/**/b", "plain"])
def test_valid_patterns(pattern: str) -> None:
    assert pattern_problem(pattern) is None


@pytest.mark.parametrize("pattern", ["", "/", "a//b", "a/../b", "ev*", "a/**x", "__ds/*", "a/./b"])
def test_invalid_patterns(pattern: str) -> None:
    assert pattern_problem(pattern) is not None

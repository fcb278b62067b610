"""The page's pure modules, run in Chromium: the bootstrap parser and the fold's edge cases."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable

    from playwright.sync_api import Page
    from viewer_page import ViewerPage


@pytest.fixture
def page(open_viewer: Callable[..., ViewerPage]) -> Page:
    return open_viewer().page


def _run(page: Page, module: str, body: str, arg: Any = None) -> Any:
    """Evaluate ``body`` (an async function of ``m``, the module, and ``arg``) in the page."""
    script = f"async (arg) => {{ const m = await import('/ui/js/{module}'); {body} }}"
    return page.evaluate(script, arg)


def test_multipart_parts_preamble_quoted_boundary_and_empty_headers(page: Page) -> None:
    body = (
        "preamble to ignore\r\n"
        "--b1\r\nContent-Type: application/octet-stream\r\n\r\n"
        '\r\n--b1\r\n\r\n{"no": "headers"}'
        '\r\n--b1\r\ncontent-type:  application/json \r\n\r\n{"a": "--b1 in a body"}'
        "\r\n--b1--\r\nepilogue"
    )
    parts = _run(page, "bootstrap.js", "return m.parseMultipart(arg, 'b1');", body)
    assert parts == [
        {"contentType": "application/octet-stream", "body": ""},
        {"contentType": "text/plain", "body": '{"no": "headers"}'},
        {"contentType": "application/json", "body": '{"a": "--b1 in a body"}'},
    ]
    boundaries = _run(
        page,
        "bootstrap.js",
        "return arg.map(m.boundaryOf);",
        ['multipart/mixed; boundary="x y"', "multipart/mixed;boundary=abc", "text/plain"],
    )
    assert boundaries == ["x y", "abc", None]


@pytest.mark.parametrize(
    "body", ["no delimiter at all", "--b1\r\nContent-Type: a/b\r\n\r\ncut short", "--b1"]
)
def test_a_truncated_bootstrap_is_an_error(page: Page, body: str) -> None:
    error = _run(
        page,
        "bootstrap.js",
        "try { m.parseMultipart(arg, 'b1'); return null } catch (e) { return e.message }",
        body,
    )
    assert error is not None
    assert error.startswith("bootstrap:")


def test_normalisation_takes_each_field_from_headers_first(page: Page) -> None:
    events = _run(
        page,
        "session-state.js",
        "return arg.map(m.normalise);",
        [
            {"type": "t", "key": "k", "operation": "set", "headers": {"operation": "delete"}},
            {"type": "t", "key": "k", "operation": "set", "headers": {"operation": None}},
            {"type": "t", "key": "k", "operation": "Set"},
            {"type": 1, "key": "", "operation": "append", "headers": "not an object"},
            [1, 2],
            {"headers": {"control": "reset"}},
        ],
    )
    assert [(e["type"], e["key"], e["kind"], e["control"]) for e in events] == [
        ("t", "k", "delete", None),
        ("t", "k", "upsert", None),
        ("t", "k", None, None),  # operations compare case-sensitively
        (None, "", "append", None),
        (None, None, None, None),
        (None, None, None, "reset"),
    ]


# As it arrives in a bootstrap: JSON, where "__proto__" is a key like any other.
SNAPSHOT = json.dumps(
    {
        "format": "ds-session-state/1",
        "state": {
            "message": {"msg:1": {"role": "user", "text": "a"}, "__proto__": {"text": "safe"}},
            "weird": "not an object",
        },
    }
)


def test_the_fold_follows_the_contract(page: Page) -> None:
    folded = _run(
        page,
        "session-state.js",
        """const state = new m.SessionState();
        state.loadSnapshot(JSON.parse(arg.snapshot));
        for (const message of arg.messages) state.apply(message);
        return {messages: state.messages().map((x) => [x.key, x.role, x.text]),
                types: Array.from(state.entities.keys()),
                polluted: ({}).text !== undefined};""",
        {
            "snapshot": SNAPSHOT,
            "messages": [
                {"type": "chunk", "key": "msg:1", "operation": "append", "value": {"text": "b"}},
                {"type": "chunk", "key": "msg:2", "operation": "append", "value": {"text": 5}},
                {"type": "chunk", "key": "msg:2", "operation": "append", "value": {"text": "c"}},
                {"type": "message", "key": "msg:3", "operation": "set", "value": "plain"},
                {"type": "chunk", "key": "msg:3", "operation": "append", "value": {"text": "x"}},
                {"type": "note", "key": "n", "operation": "append", "value": {"text": "ignored"}},
                {"type": "message", "key": "msg:4", "operation": "insert"},
                {"type": "other", "key": "o", "operation": "set", "value": 1},
                {"type": "other", "key": "o", "operation": "delete"},
            ],
        },
    )
    assert folded["messages"] == [
        ["msg:1", "user", "ab"],
        ["__proto__", None, "safe"],
        ["msg:2", None, "c"],  # a non-string text counts as ""
        ["msg:3", None, '"plain"'],  # a non-object entry is left as it is
        ["msg:4", None, "null"],
    ]
    assert folded["types"] == ["message"]  # an emptied type is removed
    assert folded["polluted"] is False


def test_reaction_keys(page: Page) -> None:
    parsed = _run(
        page,
        "session-state.js",
        "return arg.map(([key, value]) => m.parseReactionKey(key, value));",
        [
            ["reaction:42:alice:+1", None],
            ["reaction:msg:42:alice:+1", None],
            ["reaction:42:alice:x", {"emoji": "🎉"}],
            ["reaction:42:alice:a:b", None],
            ["reaction:42", None],
            ["other:42:alice:+1", None],
        ],
    )
    assert parsed == [
        {"messageKey": "msg:42", "user": "alice", "emoji": "+1"},
        {"messageKey": "msg:42", "user": "alice", "emoji": "+1"},
        {"messageKey": "msg:42", "user": "alice", "emoji": "🎉"},
        {"messageKey": "msg:42", "user": "alice", "emoji": "a:b"},
        None,
        None,
    ]

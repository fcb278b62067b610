"""The page shows a session as the sessions contract folds it: from a bootstrap
(snapshot included) and live, edits and deletes applied, reactions, typing."""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING

from playwright.sync_api import expect
from session_events import change, flat, presence, said
from viewer_stack import user_token

if TYPE_CHECKING:
    from collections.abc import Callable

    from viewer_page import ViewerPage
    from viewer_stack import ViewerStack


def _sid() -> str:
    return f"room-{uuid.uuid4().hex[:8]}"


def _reaction(message_id: str, user: str, emoji: str, operation: str) -> dict[str, object]:
    value = {"emoji": emoji} if operation != "delete" else None
    return change("reaction", f"reaction:{message_id}:{user}:{emoji}", operation, value)


def test_bootstrap_then_live_edits_deletes_reactions_and_typing(
    viewer_stack: ViewerStack, open_viewer: Callable[..., ViewerPage]
) -> None:
    sid = _sid()
    path = viewer_stack.session(sid)
    # Before the page opens: what the bootstrap carries.
    viewer_stack.append(
        path,
        presence("carol", "online"),
        presence("dave", "away"),
        presence("erin", "offline"),
        said("msg:1", "carol", "first draft"),
        flat("message", "msg:2", "set", {"role": "user", "text": "two", "author": "user:dave"}),
        said("msg:3", "dave", "soon gone"),
        _reaction("1", "dave", "👍", "insert"),
        {"not": "a session event"},
        "not even an object",
    )
    page = open_viewer(f"/sessions/{sid}")
    page.sign_in(user_token("viewer"))
    page.wait_live()
    expect(page.texts).to_have_text(["first draft", "two", "soon gone"])
    expect(page.person("carol")).to_have_attribute("data-online", "true")
    expect(page.person("dave")).to_have_attribute("data-online", "true")  # away is not offline
    expect(page.person("erin")).to_have_attribute("data-online", "false")
    expect(page.person("viewer")).to_have_text("viewer (you)")  # its own presence, posted
    expect(page.message("msg:1").locator(".reaction")).to_have_text(["👍 1"])

    # Live: an edit keeps its place, a delete removes, reactions come and go.
    viewer_stack.append(
        path,
        said("msg:1", "carol", "final text", operation="update"),
        change("message", "msg:3", "delete"),
        _reaction("1", "carol", "👍", "insert"),
        _reaction("msg:2", "carol", "🎉", "insert"),
        _reaction("1", "dave", "👍", "delete"),
        flat("typing", "user:dave", "set", {}),
        presence("erin", "online"),
    )
    expect(page.texts).to_have_text(["final text", "two"])
    expect(page.message("msg:1")).to_have_attribute("data-edited", "true")
    expect(page.message("msg:2")).to_have_attribute("data-edited", "false")
    expect(page.message("msg:1").locator(".reaction")).to_have_text(["👍 1"])
    expect(page.message("msg:1").locator(".reaction")).to_have_attribute("title", "carol")
    expect(page.message("msg:2").locator(".reaction")).to_have_text(["🎉 1"])
    expect(page.typing).to_have_text("dave is typing…")
    expect(page.person("erin")).to_have_attribute("data-online", "true")

    viewer_stack.append(path, flat("typing", "user:dave", "remove"), presence("dave", "offline"))
    expect(page.typing).to_have_text("")
    expect(page.person("dave")).to_have_attribute("data-online", "false")

    # A reset (State Protocol control message) starts the state over.
    viewer_stack.append(path, {"headers": {"control": "reset"}}, said("msg:9", "carol", "anew"))
    expect(page.texts).to_have_text(["anew"])
    expect(page.page.locator("#presence li")).to_have_count(0)


def test_a_snapshot_is_where_the_bootstrap_starts(
    viewer_stack: ViewerStack, open_viewer: Callable[..., ViewerPage]
) -> None:
    sid = _sid()
    path = viewer_stack.session(sid)
    offset = viewer_stack.append(path, said("msg:1", "carol", "compacted away"))
    # The snapshot says something else than the history it replaces, so the
    # page can only show it by reading the snapshot.
    snapshot = {
        "format": "ds-session-state/1",
        "offset": offset,
        "state": {
            "message": {
                "msg:1": {"role": "user", "text": "from the snapshot", "author": "user:carol"}
            },
            "presence": {"user:carol": {"status": "online"}},
        },
    }
    published = viewer_stack.admin.put(
        f"{path}/snapshot/{offset}",
        content=json.dumps(snapshot),
        headers={"Content-Type": "application/json"},
    )
    assert published.status_code == 204, published.text
    viewer_stack.append(path, said("msg:2", "dave", "after the snapshot"))
    page = open_viewer(f"/sessions/{sid}")
    page.sign_in(user_token("viewer"))
    page.wait_live()
    expect(page.texts).to_have_text(["from the snapshot", "after the snapshot"])
    expect(page.person("carol")).to_have_attribute("data-online", "true")
    viewer_stack.append(path, said("msg:3", "carol", "live"))
    expect(page.texts).to_have_text(["from the snapshot", "after the snapshot", "live"])

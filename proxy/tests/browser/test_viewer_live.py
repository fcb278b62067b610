"""Two users in one session, live: messages, presence, typing, a streamed reply."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from playwright.sync_api import expect
from viewer_stack import screenshot_target, user_token

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from viewer_page import ViewerPage
    from viewer_stack import ViewerStack


def _sid() -> str:
    return f"room-{uuid.uuid4().hex[:8]}"


def test_two_users_see_each_other_live(
    viewer_stack: ViewerStack, open_viewer: Callable[..., ViewerPage], tmp_path: Path
) -> None:
    sid = _sid()
    viewer_stack.session(sid)
    alice = open_viewer(f"/sessions/{sid}")
    alice.sign_in(user_token("alice"))
    alice.wait_live()
    bob = open_viewer(f"/sessions/{sid}")
    bob.sign_in(user_token("bob"))
    bob.wait_live()
    # Each sees the other come online.
    expect(alice.person("bob")).to_have_attribute("data-online", "true")
    expect(bob.person("alice")).to_have_attribute("data-online", "true")

    alice.page.fill("#compose-text", "hello")
    expect(bob.typing).to_have_text("alice is typing…")
    alice.page.press("#compose-text", "Enter")
    expect(bob.texts).to_have_text(["hello"])
    expect(bob.typing).to_have_text("")
    bob.post("hi alice")
    expect(alice.texts).to_have_text(["hello", "hi alice"])
    expect(alice.messages.last.locator(".author")).to_have_text("bob")
    expect(bob.texts).to_have_text(["hello", "hi alice"])
    # The offset shown is the stream's tail.
    tail = viewer_stack.admin.head(f"/ds/sessions/{sid}").headers["Stream-Next-Offset"]
    expect(alice.offset).to_have_text(tail)

    shot = tmp_path / "viewer.png"
    alice.page.screenshot(path=str(shot))
    target = screenshot_target()
    if target is not None:
        target.write_bytes(shot.read_bytes())

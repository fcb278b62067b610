"""Two users in one session, live: messages, presence, typing, a streamed reply."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from playwright.sync_api import expect
from session_events import chunk, replied, said
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


def _open_as(open_viewer: Callable[..., ViewerPage], sid: str, user: str) -> ViewerPage:
    page = open_viewer(f"/sessions/{sid}")
    page.sign_in(user_token(user))
    page.wait_live()
    return page


def test_a_streamed_reply_grows_chunk_by_chunk(
    viewer_stack: ViewerStack, open_viewer: Callable[..., ViewerPage]
) -> None:
    sid = _sid()
    path = viewer_stack.session(sid)
    viewer_stack.append(path, said("msg:q", "alice", "What is a durable stream?"))
    alice = _open_as(open_viewer, sid, "alice")
    words = ["An ", "append-only ", "log ", "you ", "read ", "over ", "HTTP."]
    shown = ""
    for index, word in enumerate(words):
        viewer_stack.append(path, chunk("msg:a", word, index))
        shown += word
        # Each chunk is on the page before the next one is written.
        expect(alice.message_text("msg:a")).to_have_text(shown)
        expect(alice.message("msg:a")).to_have_attribute("data-streaming", "true")
    # The finished reply replaces the streamed text with the whole message.
    viewer_stack.append(path, replied("msg:a", shown))
    expect(alice.message("msg:a")).to_have_attribute("data-streaming", "false")
    expect(alice.texts).to_have_text(["What is a durable stream?", shown])
    expect(alice.message("msg:a")).to_have_attribute("data-role", "assistant")

"""Two users in one session, live: messages, presence, typing, a streamed reply."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from durable_sessions.protocol.headers import STREAM_NEXT_OFFSET
from playwright.sync_api import expect
from session_events import change, chunk, replied, said
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
    sid = f"incident-review-{uuid.uuid4().hex[:4]}"
    path = viewer_stack.session(sid)
    alice = open_viewer(f"/sessions/{sid}")
    alice.sign_in(user_token("alice"))
    alice.wait_live()
    bob = open_viewer(f"/sessions/{sid}")
    bob.sign_in(user_token("bob"))
    bob.wait_live()
    # Each sees the other come online.
    expect(alice.person("bob")).to_have_attribute("data-online", "true")
    expect(bob.person("alice")).to_have_attribute("data-online", "true")

    question = "Can someone summarise last night's incident?"
    alice.page.fill("#compose-text", question)
    expect(bob.typing).to_have_text("alice is typing…")
    alice.page.press("#compose-text", "Enter")
    expect(bob.texts).to_have_text([question])
    expect(bob.typing).to_have_text("")
    answer = "Asking the assistant, one moment."
    bob.post(answer)
    expect(alice.texts).to_have_text([question, answer])
    expect(alice.messages.last.locator(".author")).to_have_text("bob")
    expect(bob.texts).to_have_text([question, answer])

    # An assistant reply on its way, a reaction, bob typing: what docs/viewer.md shows.
    reply = ["The primary lost its disk at 02:10; ", "writes failed over to the replica "]
    viewer_stack.append(path, *(chunk("msg:reply", part, i) for i, part in enumerate(reply)))
    expect(bob.message_text("msg:reply")).to_have_text("".join(reply))
    question_id = (alice.messages.first.get_attribute("data-key") or "").removeprefix("msg:")
    viewer_stack.append(path, change("reaction", f"reaction:{question_id}:bob:+1", "insert"))
    expect(alice.messages.first.locator(".reaction")).to_have_text(["+1 1"])
    bob.page.fill("#compose-text", "Thanks")
    expect(alice.typing).to_have_text("bob is typing…")
    # The offset shown is the stream's tail.
    tail = viewer_stack.admin.head(path).headers[STREAM_NEXT_OFFSET]
    expect(alice.offset).to_have_text(tail)
    shot = tmp_path / "viewer.png"
    alice.page.screenshot(path=str(shot), clip={"x": 0, "y": 0, "width": 1180, "height": 400})
    target = screenshot_target()
    if target is not None:
        target.write_bytes(shot.read_bytes())

    # Bob leaves: his page says so on its way out.
    bob.page.close()
    expect(alice.person("bob")).to_have_attribute("data-online", "false")


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

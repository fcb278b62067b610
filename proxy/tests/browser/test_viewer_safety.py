"""Untrusted stream content stays text; a token that stops working says so plainly."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from ds_proxy.tokens import TokenSpec, expired, mint
from playwright.sync_api import expect
from session_events import change, flat, said
from viewer_stack import BUCKET, user_token

if TYPE_CHECKING:
    from collections.abc import Callable

    from viewer_page import ViewerPage
    from viewer_stack import ViewerStack

SCRIPT = "<script>window.__pwned = 'script'</script>"
IMAGE = "<img src=x onerror=\"window.__pwned = 'img'\">"


def _sid() -> str:
    return f"room-{uuid.uuid4().hex[:8]}"


def test_a_hostile_message_renders_as_text_and_runs_nothing(
    viewer_stack: ViewerStack, open_viewer: Callable[..., ViewerPage]
) -> None:
    sid = _sid()
    path = viewer_stack.session(sid)
    page = open_viewer(f"/sessions/{sid}")
    page.sign_in(user_token("alice"))
    page.wait_joined("alice")
    # Markup in every field the page shows: text, author, role, key, user, emoji.
    viewer_stack.append(
        path,
        change(
            "message", f"msg:{IMAGE}", "insert", {"role": SCRIPT, "text": SCRIPT, "author": IMAGE}
        ),
        said("msg:2", "bob", IMAGE),
        change("reaction", f"reaction:2:{IMAGE}:{SCRIPT}", "insert", {"emoji": SCRIPT}),
        flat("presence", f"user:{IMAGE}", "set", {"status": "online"}),
        flat("typing", f"user:{SCRIPT}", "set", {}),
    )
    page.post(SCRIPT)
    expect(page.texts).to_have_text([SCRIPT, IMAGE, SCRIPT])
    expect(page.messages.first.locator(".author")).to_have_text(IMAGE)
    expect(page.message("msg:2").locator(".reaction")).to_have_text([f"{SCRIPT} 1"])
    people = page.page.locator("#presence li")
    expect(people).to_have_text([IMAGE, "alice (you)"])  # online, by name
    expect(people.first).to_have_attribute("data-user", IMAGE)
    expect(page.typing).to_have_text(f"{SCRIPT} is typing…")
    # Nothing became markup, and nothing ran.
    body = page.page.locator("body")
    expect(body.locator("img")).to_have_count(0)
    expect(body.locator("script:not([src])")).to_have_count(0)
    assert page.page.evaluate("() => window.__pwned") is None


def test_an_expired_token_gets_a_clear_message(
    viewer_stack: ViewerStack, open_viewer: Callable[..., ViewerPage]
) -> None:
    sid = _sid()
    viewer_stack.session(sid)
    page = open_viewer(f"/sessions/{sid}")
    stale = mint(expired(TokenSpec(sub="alice", read=(BUCKET,), write=(BUCKET,))))
    page.sign_in(stale)
    expect(page.notice).to_be_visible()
    expect(page.notice).to_contain_text("The gateway rejected the token (Jwt is expired)")
    expect(page.notice).to_contain_text("It expired at")
    expect(page.page.locator("#sessions li")).to_have_count(0)
    # A good token clears the message and opens the session.
    page.sign_in(user_token("alice"))
    page.wait_live()
    expect(page.notice).to_be_hidden()


def test_a_token_that_expires_while_following_stops_with_a_clear_message(
    viewer_stack: ViewerStack, open_viewer: Callable[..., ViewerPage]
) -> None:
    sid = _sid()
    path = viewer_stack.session(sid)
    page = open_viewer(f"/sessions/{sid}")
    valid_for = 6
    spec = TokenSpec(sub="alice", read=(BUCKET,), write=(BUCKET,), expires_in=valid_for)
    short = mint(spec)
    page.sign_in(short)
    page.wait_joined("alice")
    viewer_stack.append(path, said("msg:1", "bob", "still here"))
    expect(page.texts).to_have_text(["still here"])
    # The server ends the live read at exp and refuses the reconnect (the gateway would
    # still let the token through for its clock skew); the page says why and stops.
    expect(page.connection).to_have_text("stopped", timeout=(valid_for + 10) * 1000)
    expect(page.notice).to_contain_text("The gateway rejected the token (the token has expired)")
    expect(page.notice).to_contain_text("It expired at")
    expect(page.texts).to_have_text(["still here"])


def test_the_dev_stack_offers_its_token(
    viewer_stack: ViewerStack, open_viewer: Callable[..., ViewerPage]
) -> None:
    sid = _sid()
    viewer_stack.session(sid)
    page = open_viewer()
    expect(page.page.locator("#identity")).to_have_text("No token yet.")
    page.page.click("#dev-token")
    expect(page.page.locator("#identity")).to_contain_text("Signed in as dev")
    page.open(sid)
    page.wait_joined("dev")

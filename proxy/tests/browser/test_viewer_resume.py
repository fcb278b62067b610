"""Reconnects and reloads: the page resumes from its offset and shows nothing twice."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

from durable_sessions.protocol.headers import STREAM_NEXT_OFFSET
from playwright.sync_api import expect
from session_events import chunk, said
from viewer_stack import user_token

if TYPE_CHECKING:
    from collections.abc import Callable

    from playwright.sync_api import Request, Response
    from viewer_page import ViewerPage
    from viewer_stack import ViewerStack


def _sid() -> str:
    return f"room-{uuid.uuid4().hex[:8]}"


def _is_live_read(request: Request) -> bool:
    return "live=sse" in request.url


def _offset_of(request: Request) -> str:
    return parse_qs(urlsplit(request.url).query)["offset"][0]


def test_each_reconnect_resumes_from_the_last_offset(
    viewer_stack: ViewerStack, open_viewer: Callable[..., ViewerPage]
) -> None:
    sid = _sid()
    path = viewer_stack.session(sid)
    page = open_viewer(f"/sessions/{sid}")
    reads: list[Request] = []
    page.page.on(
        "request", lambda request: reads.append(request) if _is_live_read(request) else None
    )
    page.sign_in(user_token("alice"))
    page.wait_joined("alice")
    shown = ""
    tails = []
    for index in range(3):
        tails.append(viewer_stack.append(path, chunk("msg:a", f"<{index}>", index)))
        shown += f"<{index}>"
        expect(page.message_text("msg:a")).to_have_text(shown)
        # The server ends each SSE response after a while; the page opens the next.
        with page.page.expect_request(_is_live_read):
            pass
    # Every read after the first starts where the one before it had got to.
    offsets = [_offset_of(request) for request in reads]
    assert len(offsets) >= 4, offsets
    assert offsets == sorted(offsets), offsets
    assert set(tails) <= set(offsets), (tails, offsets)
    assert all(parse_qs(urlsplit(r.url).query)["access_token"] for r in reads)
    expect(page.message_text("msg:a")).to_have_text(shown)
    expect(page.connection).to_have_text("live")


def test_a_reload_resumes_without_duplicates(
    viewer_stack: ViewerStack, open_viewer: Callable[..., ViewerPage]
) -> None:
    sid = _sid()
    path = viewer_stack.session(sid)
    viewer_stack.append(path, said("msg:1", "bob", "before"), chunk("msg:2", "half ", 0))
    page = open_viewer(f"/sessions/{sid}")
    page.sign_in(user_token("alice"))
    page.wait_live()
    viewer_stack.append(path, chunk("msg:2", "way", 1))
    page.post("from alice")
    expect(page.texts).to_have_text(["before", "half way", "from alice"])

    page.page.reload()
    # The token and the open session survive the reload (per tab); the state is rebuilt.
    page.wait_live()
    expect(page.texts).to_have_text(["before", "half way", "from alice"])
    viewer_stack.append(path, chunk("msg:2", " there", 2))
    page.post("again")
    expect(page.texts).to_have_text(["before", "half way there", "from alice", "again"])
    tail = viewer_stack.admin.head(path).headers[STREAM_NEXT_OFFSET]
    expect(page.offset).to_have_text(tail)

    # A tab duplicated from this one holds the same producer id with an older
    # epoch: the server fences it (403), the page claims a newer epoch and posts.
    page.page.evaluate(
        """() => {
            const saved = JSON.parse(sessionStorage.getItem("ds-viewer:producer"));
            sessionStorage.setItem("ds-viewer:producer", JSON.stringify({...saved, epoch: -1}));
        }"""
    )
    posts: list[Response] = []
    page.page.on("response", lambda r: posts.append(r) if r.request.method == "POST" else None)
    page.page.reload()
    page.wait_joined("alice")
    page.post("from the old epoch")
    expect(page.texts).to_have_text(
        ["before", "half way there", "from alice", "again", "from the old epoch"]
    )
    # What the stream holds: each message from the page once (every epoch the
    # page claimed was accepted, nothing was doubled).
    stream = viewer_stack.admin.get(path, params={"offset": "-1"}).json()
    posted = [m["value"]["text"] for m in stream if m.get("type") == "message"]
    assert posted == ["before", "from alice", "again", "from the old epoch"]
    answers = [(int(r.request.headers["producer-epoch"]), r.status) for r in posts]
    # Epoch 0 was fenced (the stream knew epoch 1); the page went on with 2.
    assert (0, 403) in answers, answers
    assert answers[-1] == (2, 200), answers

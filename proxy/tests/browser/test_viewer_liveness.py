"""Presence and typing expire when their writer goes away, in the page as in the SDK.

The page reads ``expires_at`` with the same grammar and the same rule as
``durable_sessions.sessions`` (checked side by side on many inputs), redraws
when an entry expires, writes its own presence and typing with deadlines,
and refreshes its presence while it is open. A page that dies without a
word (its renderer crashed) stops showing as online for everyone else once
its deadline passes; the test moves the other page's clock instead of
waiting a minute.
"""

from __future__ import annotations

import contextlib
import json
import random
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest
from durable_sessions.protocol import split_json_arrays
from durable_sessions.sessions import is_expired, parse_time, presence_event, typing_event
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect
from viewer_page import ViewerPage
from viewer_stack import user_token

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from playwright.sync_api import Browser
    from viewer_stack import ViewerStack

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
PRESENCE_TTL_SECS = 60
PRESENCE_REFRESH_SECS = 20


def _sid() -> str:
    return f"room-{uuid.uuid4().hex[:8]}"


def _times(seed: int, count: int) -> list[str]:
    """Strings near and inside the §2 grammar: valid times, and each way to miss it."""
    rng = random.Random(seed)
    edge = [
        "2026-11-26T10:00:00Z",
        "2026-11-26t10:00:00.125z",
        "2026-11-26 10:00:00",
        "2026-11-26T10:00:00.1234567+05:30",
        "2026-11-26T10:00:00-18:00",
        "2026-11-26T10:00:00+18:01",
        "2026-11-26T10:00:00+01:60",
        "2026-11-26T10:00:60Z",
        "2026-11-26T24:00:00Z",
        "2026-02-29T00:00:00Z",
        "2028-02-29T00:00:00Z",
        "2026-13-01T00:00:00Z",
        "0000-01-01T00:00:00Z",
        "0001-01-01T00:00:00Z",
        "0001-01-01T00:30:00+01:00",
        "0099-06-01T00:00:00Z",
        "9999-12-31T23:59:59.999999Z",
        "9999-12-31T23:30:00-01:00",
        "2026-11-26T10:00:00+0000",
        "2026-11-26",
        "10:00:00",
        "2026-11-26T10:00:00Z\n",
        " 2026-11-26T10:00:00Z",
        "",
    ]
    drawn = []
    for _ in range(count):
        year = rng.choice(["2026", "0001", "9999", "1970", "2000", "0000", "12345"])
        month = rng.choice(["01", "02", "12", "13", "00"])
        day = rng.choice(["01", "28", "29", "30", "31", "00"])
        clock = rng.choice(["00:00:00", "23:59:59", "12:30:45", "24:00:00", "12:60:00"])
        fraction = rng.choice(["", ".5", ".123", ".123456", ".1234569", "."])
        zone = rng.choice(["", "Z", "z", "+00:00", "-05:30", "+18:00", "+19:00", "+1:00"])
        separator = rng.choice(["T", "t", " ", "_"])
        drawn.append(f"{year}-{month}-{day}{separator}{clock}{fraction}{zone}")
    return edge + drawn


def _millis(instant: datetime | None) -> float | None:
    return None if instant is None else (instant - EPOCH) / timedelta(milliseconds=1)


def _instant(millis: int) -> datetime | None:
    try:
        return EPOCH + timedelta(milliseconds=millis)
    except OverflowError:
        return None


def test_expires_at_is_read_as_the_sdk_reads_it(open_viewer: Callable[..., ViewerPage]) -> None:
    page = open_viewer().page
    texts = _times(seed=30, count=400)
    parsed = page.evaluate(
        "async (texts) => { const m = await import('/ui/js/liveness.js');"
        " return texts.map(m.parseTime); }",
        texts,
    )
    for text, js in zip(texts, parsed, strict=True):
        python = _millis(parse_time(text))
        if python is None or js is None:
            assert js == python, text
        else:
            assert abs(js - python) < 0.01, text

    # The rule itself, at instants on and around each deadline (whole milliseconds).
    rng = random.Random(31)
    cases: list[tuple[Any, int]] = []
    for text in texts[:60]:
        deadline = _millis(parse_time(text))
        base = 1_764_151_200_000 if deadline is None else int(deadline)
        for now in (base - 1, base, base + 1, base + rng.randint(-(10**6), 10**6)):
            if _instant(now) is not None:
                cases.append(({"status": "online", "expires_at": text}, now))
    cases += [({"status": "online"}, 0), (None, 0), ("online", 0), ({"expires_at": 5}, 0)]
    verdicts = page.evaluate(
        "async (cases) => { const m = await import('/ui/js/liveness.js');"
        " return cases.map(([value, now]) => m.isExpired(value, now)); }",
        cases,
    )
    for (value, now), js in zip(cases, verdicts, strict=True):
        at = _instant(now)
        assert at is not None
        assert js == is_expired(value, at), (value, now)


def test_the_page_drops_expired_presence_and_typing_by_itself(
    viewer_stack: ViewerStack, open_viewer: Callable[..., ViewerPage]
) -> None:
    sid = _sid()
    path = viewer_stack.session(sid)
    # Deadlines a minute out, and the page's clock moved past them: a loaded machine
    # can take seconds to open the page, which must not decide what it shows.
    short = timedelta(seconds=60)
    viewer_stack.append(
        path,
        presence_event("carol", ttl=short),
        typing_event("carol", ttl=short),
        presence_event("dave", ttl=timedelta(hours=1)),
    )
    page = open_viewer(f"/sessions/{sid}", clock=True)
    page.sign_in(user_token("viewer"))
    page.wait_live()
    expect(page.person("carol")).to_have_attribute("data-online", "true")
    expect(page.typing).to_have_text("carol is typing…")
    # No new event arrives: the page redraws when the deadline passes.
    page.page.clock.fast_forward(61_000)
    expect(page.person("carol")).to_have_attribute("data-online", "false")
    expect(page.typing).to_have_text("")
    expect(page.person("dave")).to_have_attribute("data-online", "true")


@pytest.fixture
def clocked_member(
    browser: Browser, viewer_stack: ViewerStack
) -> Iterator[Callable[[str, str], ViewerPage]]:
    """Open session ``sid`` in the viewer as ``user`` (its own browser context), signed in
    and present, the page's clock under the test's control (Playwright's clock)."""
    pages: list[ViewerPage] = []

    def open_page(sid: str, user: str) -> ViewerPage:
        context = browser.new_context()
        raw = context.new_page()
        raw.clock.install()
        page = ViewerPage(raw, viewer_stack.url)
        page.goto(f"/sessions/{sid}")
        pages.append(page)
        page.sign_in(user_token(user))
        page.wait_joined(user)
        return page

    yield open_page
    problems = [problem for page in pages for problem in page.problems]
    for page in pages:
        page.page.context.close()
    assert problems == []


def _presence_of(viewer_stack: ViewerStack, path: str, user: str) -> list[dict[str, Any]]:
    messages = [m for m in _read(viewer_stack, path) if isinstance(m, dict)]
    return [
        m["value"]
        for m in messages
        if (m.get("type"), m.get("key")) == ("presence", f"user:{user}")
    ]


def _read(viewer_stack: ViewerStack, path: str) -> list[Any]:
    body = viewer_stack.admin.get(path, params={"offset": "-1"}).content
    return [json.loads(raw) for raw in split_json_arrays(body)]


def test_the_pages_presence_has_a_deadline_and_is_refreshed(
    viewer_stack: ViewerStack, clocked_member: Callable[[str, str], ViewerPage]
) -> None:
    sid = _sid()
    path = viewer_stack.session(sid)
    alice = clocked_member(sid, "alice")
    [first] = _presence_of(viewer_stack, path, "alice")
    joined = parse_time(first["expires_at"])
    assert first["status"] == "online"
    assert joined is not None

    alice.page.fill("#compose-text", "hel")
    typing = _wait_for(
        lambda: [m for m in _read(viewer_stack, path) if m.get("type") == "typing"], bool
    )
    typed_until = parse_time(typing[-1]["value"]["expires_at"])
    assert typed_until is not None
    # Written after joining, for ten seconds rather than a minute.
    assert joined - timedelta(seconds=PRESENCE_TTL_SECS) < typed_until < joined

    # A refresh interval later (on the page's clock), the page says so again, further out.
    alice.page.clock.fast_forward(PRESENCE_REFRESH_SECS * 1000 + 1000)
    expect(alice.person("alice")).to_have_attribute("data-online", "true")
    refreshed = _wait_for(lambda: _presence_of(viewer_stack, path, "alice"), lambda v: len(v) >= 2)
    later = parse_time(refreshed[-1]["expires_at"])
    assert later is not None
    assert later - joined >= timedelta(seconds=PRESENCE_REFRESH_SECS)


def _wait_for(read: Callable[[], list[Any]], done: Callable[[list[Any]], bool]) -> list[Any]:
    deadline = time.monotonic() + 15
    while True:
        value = read()
        if done(value) or time.monotonic() > deadline:
            assert done(value), value
            return value
        time.sleep(0.1)


def test_a_page_that_dies_stops_showing_as_online(
    viewer_stack: ViewerStack, clocked_member: Callable[[str, str], ViewerPage]
) -> None:
    sid = _sid()
    path = viewer_stack.session(sid)
    alice = clocked_member(sid, "alice")
    bob = clocked_member(sid, "bob")
    bob.page.fill("#compose-text", "I was about to say")
    expect(alice.person("bob")).to_have_attribute("data-online", "true")
    expect(alice.typing).to_have_text("bob is typing…")

    # Bob's renderer crashes: no pagehide, no "offline", no "stopped typing".
    session = bob.page.context.new_cdp_session(bob.page)
    with bob.page.expect_event("crash"), contextlib.suppress(PlaywrightError):
        session.send("Page.crash", timeout=5_000)  # never answered: the renderer is gone
    bob.problems.clear()  # the crash is the point, not a failure of the page
    assert [v["status"] for v in _presence_of(viewer_stack, path, "bob")] == ["online"]

    # Ten seconds on, his typing has expired; a minute on, his presence.
    alice.page.clock.fast_forward(11_000)
    expect(alice.typing).to_have_text("")
    expect(alice.person("bob")).to_have_attribute("data-online", "true")
    alice.page.clock.fast_forward(PRESENCE_TTL_SECS * 1000)
    expect(alice.person("bob")).to_have_attribute("data-online", "false")
    expect(alice.person("alice")).to_have_attribute("data-online", "true")
    assert "offline" not in [v["status"] for v in _presence_of(viewer_stack, path, "bob")]

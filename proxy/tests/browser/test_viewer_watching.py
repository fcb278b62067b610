"""Ten sessions followed at once in one page: live over HTTP/2 (TLS), starved over HTTP/1.1.

The page watches ten sessions (the Watching list: a bootstrap and an
EventSource each). Over TLS the gateway speaks h2 and all ten reads share
one connection: every one is live and gets what is appended to it. Over
plain HTTP/1.1 Chromium opens at most six connections to the gateway, so
six reads hold them all and the other four never start: why the gateway
serves TLS (docs/security.md). Both stacks here keep SSE responses open
for a minute, so no read gives its connection up during the test.
"""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect
from session_events import said
from viewer_page import ViewerPage
from viewer_stack import running_stack, user_token

if TYPE_CHECKING:
    from collections.abc import Iterator

    from playwright.sync_api import Browser
    from viewer_stack import ViewerStack

SESSIONS = 10
# Chromium's connections per host over HTTP/1.1.
HTTP1_CONNECTIONS = 6
LONG_SSE_SECS = 60


@pytest.fixture(scope="module")
def tls_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ViewerStack]:
    logs = tmp_path_factory.mktemp("viewer-tls")
    with running_stack(logs, sse_reconnect_secs=LONG_SSE_SECS, local_tls_dir=logs / "tls") as stack:
        yield stack


@pytest.fixture(scope="module")
def plain_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ViewerStack]:
    with running_stack(
        tmp_path_factory.mktemp("viewer-plain"), sse_reconnect_secs=LONG_SSE_SECS
    ) as stack:
        yield stack


def _sessions(stack: ViewerStack) -> list[str]:
    batch = uuid.uuid4().hex[:6]
    ids = [f"watch-{batch}-{n:02d}" for n in range(SESSIONS)]
    for sid in ids:
        path = stack.session(sid)
        stack.append(path, said(f"msg:{sid}:first", "alice", f"first in {sid}"))
    return ids


def _watch_all(browser: Browser, stack: ViewerStack, ids: list[str]) -> ViewerPage:
    # The TLS stack's certificate is self-signed: this context accepts it.
    context = browser.new_context(ignore_https_errors=True, viewport={"width": 1180, "height": 900})
    viewer = ViewerPage(context.new_page(), stack.url)
    viewer.goto()
    viewer.sign_in(user_token("watcher"))
    for sid in ids:
        viewer.page.click(f'#sessions button.watch[data-watch="{sid}"]')
    return viewer


def test_ten_sessions_in_one_page_are_all_live_over_http2(
    browser: Browser, tls_stack: ViewerStack
) -> None:
    ids = _sessions(tls_stack)
    viewer = _watch_all(browser, tls_stack, ids)
    page = viewer.page
    try:
        watched = page.locator("#watching li.watched")
        expect(watched).to_have_count(SESSIONS)
        expect(page.locator('#watching li[data-state="live"]')).to_have_count(SESSIONS)
        expect(page.locator("#watching-count")).to_have_text(f"{SESSIONS} of {SESSIONS} live")
        # Every one of them gets what is appended to it, while all stay connected.
        for sid in ids:
            tls_stack.append(f"/ds/sessions/{sid}", said(f"msg:{sid}:next", "bob", f"hi {sid}"))
        for sid in ids:
            entry = page.locator(f'#watching li[data-session="sessions/{sid}"]')
            expect(entry.locator(".last")).to_have_text(f"hi {sid}")
            expect(entry).to_have_attribute("data-count", "2")
        expect(page.locator('#watching li[data-state="live"]')).to_have_count(SESSIONS)
        protocol = page.evaluate("performance.getEntriesByType('navigation')[0].nextHopProtocol")
        assert protocol == "h2"
        assert viewer.problems == []
    finally:
        page.context.close()
    # Envoy logs a read when it ends (closing the page ended all ten): each was an h2 stream.
    deadline = time.monotonic() + 30
    while len(reads := _live_reads(tls_stack)) < SESSIONS:
        assert time.monotonic() < deadline, reads
        time.sleep(0.2)
    assert {entry["protocol"] for entry in reads} == {"HTTP/2"}


def _live_reads(stack: ViewerStack) -> list[dict[str, object]]:
    return [
        entry
        for entry in stack.access_log()
        if entry["method"] == "GET"
        and str(entry["path"]).startswith("/ds/sessions/watch-")
        and not str(entry["path"]).endswith("/bootstrap")
    ]


def test_over_http11_a_page_following_ten_sessions_starves(
    browser: Browser, plain_stack: ViewerStack
) -> None:
    ids = _sessions(plain_stack)
    viewer = _watch_all(browser, plain_stack, ids)
    page = viewer.page
    try:
        expect(page.locator("#watching li.watched")).to_have_count(SESSIONS)
        live = page.locator('#watching li[data-state="live"]')
        expect(live).to_have_count(HTTP1_CONNECTIONS)
        # The other four wait for a connection that the six live reads keep for a minute.
        page.wait_for_timeout(3000)
        expect(live).to_have_count(HTTP1_CONNECTIONS)
        waiting = page.locator('#watching li:not([data-state="live"])')
        expect(waiting).to_have_count(SESSIONS - HTTP1_CONNECTIONS)
        protocol = page.evaluate("performance.getEntriesByType('navigation')[0].nextHopProtocol")
        assert protocol == "http/1.1"
    finally:
        page.context.close()

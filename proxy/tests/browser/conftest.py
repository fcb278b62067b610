"""Fixtures for the viewer's browser tests: one stack and one Chromium per run.

The stack is a real ds-server behind a real Envoy (the dev config, with the
dev token route that `make dev` adds); the browser is Debian's Chromium,
driven by Playwright (its own browser download cannot be reached).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import sync_playwright
from viewer_page import ViewerPage
from viewer_stack import SSE_RECONNECT_SECS, ViewerStack, running_stack

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from playwright.sync_api import Browser

CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="package")
def viewer_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ViewerStack]:
    with running_stack(
        tmp_path_factory.mktemp("viewer-stack"), sse_reconnect_secs=SSE_RECONNECT_SECS
    ) as stack:
        yield stack


# Package scope, not session: Playwright's sync API keeps an event loop running
# in the main thread while it is open, which breaks every asyncio test that
# would run after these in the same process.
@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    """One headless Chromium for these tests; each test opens its own contexts."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: `make setup` installs Debian's chromium")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM))
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def open_viewer(browser: Browser, viewer_stack: ViewerStack) -> Iterator[Callable[..., ViewerPage]]:
    """Open the viewer as a new user (its own browser context), optionally at a #fragment,
    optionally with the page's clock under the test's control (``clock=True``).

    Every page fails its test on a script error or a CSP violation.
    """
    pages: list[ViewerPage] = []

    def open_page(fragment: str | None = None, *, clock: bool = False) -> ViewerPage:
        context = browser.new_context(viewport={"width": 1180, "height": 760})
        raw = context.new_page()
        if clock:
            raw.clock.install()
        page = ViewerPage(raw, viewer_stack.url)
        page.goto(fragment)
        pages.append(page)
        return page

    yield open_page
    problems = [problem for page in pages for problem in page.problems]
    for page in pages:
        page.page.context.close()
    assert problems == []

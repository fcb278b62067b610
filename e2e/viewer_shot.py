"""A screenshot of the session viewer showing one session, as a reader of the docs sees it.

    python e2e/viewer_shot.py GATEWAY_URL SESSION_ID OUT.png

Opens ``{GATEWAY_URL}/ui/#/sessions/{SESSION_ID}`` in Debian's Chromium,
presses *Use the dev token* (the button `make dev`'s gateway offers), waits
until the session is live and its messages are drawn, and saves the top of
the page. A process of its own: Playwright's sync API holds an event loop
that the asyncio code of the e2e suite cannot share.
"""

from __future__ import annotations

import sys
from pathlib import Path

from playwright.sync_api import expect, sync_playwright

CHROMIUM = "/usr/bin/chromium"
WAIT_MS = 30_000


def main(gateway: str, session: str, out: Path, messages: int) -> None:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        try:
            page = browser.new_context(viewport={"width": 1180, "height": 560}).new_page()
            page.set_default_timeout(WAIT_MS)
            page.goto(f"{gateway}/ui/#/sessions/{session}")
            page.click("#dev-token")
            expect(page.locator("#messages li .text")).to_have_count(messages, timeout=WAIT_MS)
            expect(page.locator("#connection")).to_have_text("live", timeout=WAIT_MS)
            page.screenshot(path=str(out), clip={"x": 0, "y": 0, "width": 1180, "height": 420})
        finally:
            browser.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], Path(sys.argv[3]), int(sys.argv[4]))

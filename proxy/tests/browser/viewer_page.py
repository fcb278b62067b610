"""The viewer page as a test drives it: sign in, open, read what it shows, post."""

from __future__ import annotations

from typing import TYPE_CHECKING

from playwright.sync_api import expect

if TYPE_CHECKING:
    from playwright.sync_api import ConsoleMessage, Locator, Page

# Long enough for a loaded 2-core machine; a wait ends as soon as its condition holds.
WAIT_MS = 15_000


class ViewerPage:
    def __init__(self, page: Page, base_url: str) -> None:
        self.page = page
        self.base_url = base_url
        # Script errors and CSP violations: the test fails on any.
        self.problems: list[str] = []
        page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        page.on("console", self._console)
        page.set_default_timeout(WAIT_MS)
        expect.set_options(timeout=WAIT_MS)

    def _console(self, message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text:
            self.problems.append(f"CSP: {message.text}")

    def goto(self, fragment: str | None = None) -> None:
        self.page.goto(f"{self.base_url}/ui/{'#' + fragment if fragment else ''}")
        # The module has run once the identity line says something.
        expect(self.page.locator("#identity")).not_to_be_empty()

    def sign_in(self, token: str) -> None:
        self.page.fill("#token", token)
        self.page.click("#token-form button[type=submit]")

    def open(self, session_id: str) -> None:
        self.page.click(f'#sessions a[data-session="{session_id}"]')

    def post(self, text: str) -> None:
        self.page.fill("#compose-text", text)
        self.page.press("#compose-text", "Enter")

    def message(self, key: str) -> Locator:
        return self.page.locator(f'#messages li[data-key="{key}"]')

    def message_text(self, key: str) -> Locator:
        return self.message(key).locator(".text")

    @property
    def messages(self) -> Locator:
        return self.page.locator("#messages li")

    @property
    def texts(self) -> Locator:
        return self.page.locator("#messages li .text")

    def person(self, user: str) -> Locator:
        return self.page.locator(f'#presence li[data-user="{user}"]')

    @property
    def connection(self) -> Locator:
        return self.page.locator("#connection")

    @property
    def offset(self) -> Locator:
        return self.page.locator("#offset")

    @property
    def notice(self) -> Locator:
        return self.page.locator("#notice")

    @property
    def typing(self) -> Locator:
        return self.page.locator("#typing")

    def wait_live(self) -> None:
        expect(self.connection).to_have_text("live")

    def wait_joined(self, user: str) -> None:
        """Live, and the page's own presence is in the stream (nothing of its own in flight)."""
        self.wait_live()
        expect(self.person(user)).to_have_text(f"{user} (you)")

"""Fixtures for the viewer's browser tests: one stack and one Chromium per run.

The stack is a real ds-server behind a real Envoy (the dev config, with the
dev token route that `make dev` adds); the browser is Debian's Chromium,
driven by Playwright (its own browser download cannot be reached).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest
from ds_proxy import envoy_config as ec
from ds_proxy import processes
from ds_proxy.dev_token import mint_dev_token, with_dev_token
from ds_proxy.paths import DEV_CONFIG
from ds_proxy.tokens import bucket_token
from playwright.sync_api import sync_playwright
from viewer_page import ViewerPage
from viewer_stack import BUCKET, SSE_RECONNECT_SECS, ViewerStack

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from playwright.sync_api import Browser

CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="session")
def viewer_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ViewerStack]:
    """ds-server (memory store, gateway auth) behind Envoy, on free loopback ports.

    The only place these tests start processes (ds_proxy.processes, as
    `make dev` does): a launcher change is made here alone.
    """
    logs = tmp_path_factory.mktemp("viewer-stack")
    listen, server_port, admin_port = (processes.free_port() for _ in range(3))
    server = processes.ds_server(
        server_port,
        env={
            "DS_STORAGE__MODE": "memory",
            "DS_SERVER__SSE_RECONNECT_INTERVAL_SECS": str(SSE_RECONNECT_SECS),
        },
        argv=[sys.executable, "-m", "ds_server", "--log-level", "warning"],
    )
    config = ec.localize(
        ec.load(DEV_CONFIG), listen_port=listen, upstream_port=server_port, admin_port=admin_port
    )
    gateway = processes.envoy(with_dev_token(config, mint_dev_token()), admin_port=admin_port)
    url = f"http://127.0.0.1:{listen}"
    server.start(logs / "ds-server.log")
    try:
        gateway.start(logs / "envoy.log")
        token = bucket_token("admin", read=("*",), write=("*",))
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=url, headers=headers, timeout=30.0) as admin:
            assert admin.put(f"/ds/{BUCKET}").status_code == 201
            yield ViewerStack(url, admin)
    finally:
        gateway.stop()
        server.stop()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the whole run; each test opens its own contexts."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: `make setup` installs Debian's chromium")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM))
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def open_viewer(
    browser: Browser, viewer_stack: ViewerStack
) -> Iterator[Callable[[str | None], ViewerPage]]:
    """Open the viewer as a new user (its own browser context), optionally at a #fragment.

    Every page fails its test on a script error or a CSP violation.
    """
    pages: list[ViewerPage] = []

    def open_page(fragment: str | None = None) -> ViewerPage:
        context = browser.new_context(viewport={"width": 1180, "height": 760})
        page = ViewerPage(context.new_page(), viewer_stack.url)
        page.goto(fragment)
        pages.append(page)
        return page

    yield open_page
    problems = [problem for page in pages for problem in page.problems]
    for page in pages:
        page.page.context.close()
    assert problems == []

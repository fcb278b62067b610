"""Real ds-server processes for the slow-reader suite: one per backend, shared by the session.

Readers here are plain sockets that a test can leave unread; each test
works on streams of its own, so tests never see each other's data.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from live_servers import BACKENDS, Server, server_env
from support.server_process import ServerProcess

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture(scope="session", params=BACKENDS)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """A running server of each backend in turn (one at a time: tests are grouped by it)."""
    backend: str = request.param
    data_dir = tmp_path_factory.mktemp(f"live-{backend}")
    with (
        ServerProcess(env=server_env(backend, data_dir)) as process,
        httpx.Client(base_url=process.url, timeout=30.0) as http,
    ):
        yield Server(backend, process, http)

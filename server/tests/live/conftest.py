"""Real ds-server processes for the slow-reader suite: one per backend, shared by the session.

Readers here are plain sockets that a test can leave unread; each test
works on streams of its own, so tests never see each other's data.
"""

from __future__ import annotations

import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.server_process import ServerProcess

if TYPE_CHECKING:
    from collections.abc import Iterator

BACKENDS = ("memory", "sqlite", "file-durable", "file-fast")
# A reader that takes nothing for this long is disconnected; short, so a
# test can watch it happen, long enough that a reader paused briefly is not.
STALL_TIMEOUT_SECS = 3.0
OCTET = "application/octet-stream"


@dataclass(frozen=True, slots=True)
class Server:
    backend: str
    process: ServerProcess
    http: httpx.Client

    @property
    def port(self) -> int:
        return self.process.port

    def new_stream(self, content_type: str = OCTET) -> str:
        path = f"/v1/stream/slow-{uuid.uuid4().hex[:12]}"
        response = self.http.put(path, headers={"Content-Type": content_type})
        assert response.status_code == 201, response.text
        return path

    def append(self, path: str, body: bytes, content_type: str = OCTET) -> None:
        response = self.http.post(path, content=body, headers={"Content-Type": content_type})
        assert response.status_code in (200, 204), response.text


def _env(backend: str, data_dir: Path) -> dict[str, str]:
    return {
        "DS_STORAGE__MODE": backend,
        "DS_STORAGE__DATA_DIR": str(data_dir),
        "DS_LIMITS__MAX_STREAM_BYTES": str(256 * 1024 * 1024),
        "DS_LIMITS__MAX_MEMORY_BYTES": str(1024 * 1024 * 1024),
        "DS_SERVER__STALLED_READER_TIMEOUT_SECS": str(STALL_TIMEOUT_SECS),
        "DS_SERVER__LONG_POLL_TIMEOUT_SECS": "5",
    }


@pytest.fixture(scope="session", params=BACKENDS)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """A running server of each backend in turn (one at a time: tests are grouped by it)."""
    backend: str = request.param
    data_dir = tmp_path_factory.mktemp(f"live-{backend}")
    with (
        ServerProcess(env=_env(backend, data_dir)) as process,
        httpx.Client(base_url=process.url, timeout=30.0) as http,
    ):
        yield Server(backend, process, http)

"""A real ds-server (memory backend) for the client tests, and a fresh stream per test;
a real ds-server behind a real Envoy for the SDK's integration tests."""

from __future__ import annotations

import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

# The server's own test support starts and stops ds-server processes.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "server" / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from sdk_stack import SdkStack
from support.server_process import ServerProcess

if TYPE_CHECKING:
    from collections.abc import Iterator

SSE_RECONNECT_SECS = 1
LONG_POLL_SECS = 1


@pytest.fixture(scope="session")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env = {
        "DS_STORAGE__MODE": "memory",
        "DS_STORAGE__DATA_DIR": str(tmp_path_factory.mktemp("client-server")),
        "DS_SERVER__SSE_RECONNECT_INTERVAL_SECS": str(SSE_RECONNECT_SECS),
        "DS_SERVER__LONG_POLL_TIMEOUT_SECS": str(LONG_POLL_SECS),
    }
    with ServerProcess(env=env) as server:
        yield server.url


@pytest.fixture(scope="session")
def sse_reconnect_secs() -> float:
    """How long the test server keeps an SSE connection open before ending it."""
    return SSE_RECONNECT_SECS


@pytest.fixture(scope="session")
def bucket_url(server_url: str) -> str:
    bucket = "client-" + uuid.uuid4().hex[:12]
    assert httpx.put(f"{server_url}/ds/{bucket}").status_code == 201
    return f"{server_url}/ds/{bucket}"


@dataclass(frozen=True, slots=True)
class NewStream:
    """Creates streams with unique names in the session's bucket."""

    bucket_url: str

    def __call__(self, content_type: str = "application/json", body: bytes = b"") -> str:
        url = f"{self.bucket_url}/{uuid.uuid4().hex}"
        response = httpx.put(url, content=body, headers={"Content-Type": content_type})
        assert response.status_code == 201, response.text
        return url


@pytest.fixture
def new_stream(bucket_url: str) -> NewStream:
    return NewStream(bucket_url)


@pytest.fixture(scope="session")
def sdk_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SdkStack]:
    """ds-server behind Envoy: what an application in production talks to."""
    stack = SdkStack(tmp_path_factory.mktemp("sdk-stack"))
    stack.start()
    try:
        yield stack
    finally:
        stack.stop()

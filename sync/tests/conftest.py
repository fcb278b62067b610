"""A real ds-server for the sync tests, and per test a bucket, a database and a ds-sync."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

# The server's own test support starts and stops ds-server processes.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "server" / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from support.server_process import ServerProcess
from sync_support import Streams, SyncProcess

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture(scope="session")
def ds_server() -> Iterator[str]:
    env = {
        "DS_STORAGE__MODE": "memory",
        # Short, so reconnects (which re-check the subscriptions) happen during tests.
        "DS_SERVER__SSE_RECONNECT_INTERVAL_SECS": "5",
        "DS_SERVER__LONG_POLL_TIMEOUT_SECS": "2",
    }
    with ServerProcess(env=env) as server:
        yield server.url


@pytest.fixture
def streams(ds_server: str) -> Streams:
    """A fresh bucket on the test server."""
    bucket = "b" + uuid.uuid4().hex[:12]
    assert httpx.put(f"{ds_server}/ds/{bucket}").status_code == 201
    return Streams(ds_server, bucket)


@pytest.fixture
def sync(ds_server: str, postgres_db: str, streams: Streams) -> Iterator[SyncProcess]:
    """A ds-sync (not started) syncing the test's bucket into the test's database."""
    process = SyncProcess(ds_server, postgres_db, f"{streams.bucket}/*")
    try:
        yield process
    finally:
        process.kill()

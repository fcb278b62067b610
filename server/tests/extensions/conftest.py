"""Real ds-server processes for the extension suite: one per backend, shared by the session.

Every test takes ``server`` (parametrized over all backends) and works in a
bucket of its own, so tests never see each other's streams. Tests that
restart a server or measure its data directory start one of their own.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ext_helpers import BACKENDS, Backend, Bucket, server_env
from support.postgres import postgres_env
from support.server_process import ServerProcess

if TYPE_CHECKING:
    from collections.abc import Iterator


class ServerPool:
    """Starts one server per backend on first use and stops them all at the end."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._running: dict[str, Backend] = {}

    def get(self, name: str, **extra: str) -> Backend:
        backend = self._running.get(name)
        if backend is None:
            data_dir = self._root / name
            data_dir.mkdir()
            process = ServerProcess(env=server_env(name, data_dir, **extra))
            process.start()
            backend = Backend(name=name, url=process.url, data_dir=data_dir, process=process)
            self._running[name] = backend
        return backend

    def stop(self) -> None:
        for backend in self._running.values():
            backend.process.stop()
        self._running.clear()


@pytest.fixture(scope="session")
def server_pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerPool]:
    pool = ServerPool(tmp_path_factory.mktemp("ext-servers"))
    try:
        yield pool
    finally:
        pool.stop()


# The postgres backend runs on every version of the Postgres matrix (`-m postgres`).
PARAMS = [pytest.param(b, marks=pytest.mark.postgres) if b == "postgres" else b for b in BACKENDS]


@pytest.fixture(scope="session", params=PARAMS)
def server(request: pytest.FixtureRequest, server_pool: ServerPool) -> Backend:
    """A running server of each backend in turn."""
    if request.param == "postgres":
        return server_pool.get("postgres", **postgres_env(request.getfixturevalue("postgres")))
    return server_pool.get(request.param)


@pytest.fixture
def http(server: Backend) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=30.0) as client:
        yield client


@pytest.fixture
def bucket(http: httpx.Client) -> Bucket:
    """A fresh, empty bucket on ``server``."""
    return Bucket.create(http)

"""Docker-only tests (marked ``docker``, opt-in: ``make test-docker``): Electric's real image
and PostgreSQL 17 through testcontainers, and the compose file brought up. Without a Docker
engine each skips with a one-line reason (the ``docker_engine`` fixture)."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

# The sync tests' helpers (ds-sync processes, stream readers) and the server's.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "server" / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sync" / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ds_stack.postgres.docker import PASSWORD, USER, postgres_command
from electric_docker import (
    DATABASE,
    ELECTRIC_IMAGE,
    POSTGRES_IMAGE,
    ElectricStack,
    electric_environment,
)
from support.server_process import ServerProcess
from sync_support import wait_until

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture(scope="session")
def electric(docker_engine: None) -> Iterator[ElectricStack]:
    """PostgreSQL 17 and Electric's real image, through testcontainers."""
    from ds_stack.ports import free_port
    from testcontainers.community.postgres import PostgresContainer
    from testcontainers.core.container import DockerContainer

    postgres = PostgresContainer(
        POSTGRES_IMAGE, username=USER, password=PASSWORD, dbname=DATABASE, driver=None
    ).with_command(postgres_command({}))
    with postgres:
        port = int(postgres.get_exposed_port(5432))
        electric_port = free_port()
        container = (
            DockerContainer(ELECTRIC_IMAGE)
            .with_envs(**electric_environment(port, electric_port))
            .with_kwargs(network_mode="host")
        )
        with container:
            url = f"http://127.0.0.1:{electric_port}"
            wait_until(lambda: _answers(f"{url}/v1/health"), timeout=120, what="Electric")
            yield ElectricStack(postgres.get_connection_url(driver=None), url)


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.TransportError:
        return False


@pytest.fixture(scope="session")
def ds_server() -> Iterator[str]:
    with ServerProcess(env={"DS_STORAGE__MODE": "memory"}) as server:
        yield server.url


@pytest.fixture
def bucket(ds_server: str) -> str:
    name = "b" + uuid.uuid4().hex[:12]
    assert httpx.put(f"{ds_server}/ds/{name}").status_code == 201
    return name

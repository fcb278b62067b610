"""PostgreSQL in Docker through testcontainers, for the tests, where a Docker engine exists.

The official ``postgres`` image, started with the settings every server
here gets (``wal_level=logical`` …) plus the caller's, reached on the port
Docker publishes. Without an engine ``DockerUnavailable`` says why in one
line, and the tests that need it skip with that line.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from ds_stack.postgres.external import ExternalPostgres
from ds_stack.postgres.server import BASE_SETTINGS

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

# The superuser the container is created with.
USER = "postgres"
PASSWORD = "password"


class DockerUnavailable(RuntimeError):
    """No Docker engine answers here; the message is the one-line reason."""


def docker_engine_reason() -> str | None:
    """None when a Docker engine answers, else why not, in one line."""
    try:
        from testcontainers.core.docker_client import DockerClient
    except ImportError:
        return "testcontainers is not installed (make setup installs it)"
    try:
        # Connecting asks the engine for its API version: no engine, no client.
        DockerClient(timeout=5).client.close()
    except Exception as exc:  # docker-py raises several kinds; any of them means "no engine"
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return f"no Docker engine answers ({detail[:160]})"
    return None


def postgres_command(settings: Mapping[str, str]) -> list[str]:
    """The container's command: ``postgres`` with every ``-c name=value``."""
    command = ["postgres"]
    for name, value in {**BASE_SETTINGS, **settings}.items():
        command += ["-c", f"{name}={value}"]
    return command


@contextlib.contextmanager
def docker_postgres(image: str, settings: Mapping[str, str]) -> Iterator[ExternalPostgres]:
    """A container of ``image`` (``postgres:16``) for as long as the block runs."""
    reason = docker_engine_reason()
    if reason is not None:
        raise DockerUnavailable(reason)
    from testcontainers.community.postgres import PostgresContainer

    container = PostgresContainer(
        image, username=USER, password=PASSWORD, dbname="postgres", driver=None
    ).with_command(postgres_command(settings))
    with container:
        yield ExternalPostgres(container.get_connection_url(driver=None))

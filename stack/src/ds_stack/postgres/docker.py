"""PostgreSQL in Docker through testcontainers, for the tests, where a Docker engine exists.

The official ``postgres`` image, started with the settings every server
here gets (``wal_level=logical`` …) plus the caller's, reached on the port
Docker publishes. Without an engine ``DockerUnavailable`` says why in one
line, and the tests that need it skip with that line.
"""

from __future__ import annotations

import contextlib
import os
import socket
from typing import TYPE_CHECKING

from ds_settings import defaults

from ds_stack.postgres.external import ExternalPostgres
from ds_stack.postgres.server import BASE_SETTINGS

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

_DEFAULT_HOST = "unix:///var/run/docker.sock"
# The superuser the container is created with.
USER = defaults.POSTGRES_USER
PASSWORD = defaults.POSTGRES_PASSWORD


class DockerUnavailable(RuntimeError):
    """No Docker engine answers here; the message is the one-line reason."""


def docker_engine_reason() -> str | None:
    """None when a Docker engine answers ``/_ping`` at ``DOCKER_HOST`` (default: the unix
    socket), else why not, in one line."""
    host = os.environ.get("DOCKER_HOST") or _DEFAULT_HOST
    if host.startswith("unix://"):
        family, address = socket.AF_UNIX, host.removeprefix("unix://")
    elif host.startswith("tcp://"):
        name, _, port = host.removeprefix("tcp://").rstrip("/").rpartition(":")
        family, address = socket.AF_INET, (name, int(port))  # type: ignore[assignment]
    else:
        return f"DOCKER_HOST={host} is not a unix:// or tcp:// address these tests can probe"
    try:
        with socket.socket(family, socket.SOCK_STREAM) as conn:
            conn.settimeout(5)
            conn.connect(address)
            conn.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
            status_line = conn.recv(256).split(b"\r\n", 1)[0].decode(errors="replace")
    except OSError as exc:
        return f"no Docker engine answers at {host} ({exc.strerror or exc})"
    if status_line.split(" ")[1:2] != ["200"]:
        return f"the Docker engine at {host} answered {status_line!r} to /_ping"
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

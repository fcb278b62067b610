"""pytest fixtures: one Postgres server per test session, a fresh database per test.

Registered as a pytest plugin (entry point ``pytest11``), so the tests of
every workspace member can ask for them:

- ``postgres`` (session): the running server (``url()``, ``create_database``,
  ``drop_database``), from where ``ds_stack.postgres.testing`` says: the
  embedded wheel, ``DS_TEST_POSTGRES_BIN``, ``DS_TEST_POSTGRES_URL`` or
  ``DS_TEST_POSTGRES_DOCKER``.
- ``postgres_db`` (function): the URL of a database created for the test
  and dropped after it; ``CREATE DATABASE`` copies a template, so it's cheap.
- ``postgres_source`` (session): that choice, for a test that needs a
  server of its own (``postgres_source.server(settings)``).

Every test that uses one of them is marked ``postgres``: ``-m postgres``
selects what runs again on each Postgres version. A test that asks for the
server in its body (``request.getfixturevalue``) carries the mark itself.

Tests marked ``docker`` are opt-in: they run only when the ``-m``
expression names ``docker`` (``make test-docker``), and skip with a
one-line reason where no Docker engine answers (``docker_engine``).
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ds_stack.postgres.testing import PostgresServer, ServerSource

_FIXTURES = frozenset({"postgres", "postgres_db", "postgres_source"})


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "postgres: needs a Postgres server (runs on every version of the matrix)"
    )
    config.addinivalue_line(
        "markers", "docker: needs a Docker engine (testcontainers); skips without one"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.postgres)
    if "docker" in (config.option.markexpr or ""):
        return
    opted_out = [item for item in items if item.get_closest_marker("docker")]
    if opted_out:
        config.hook.pytest_deselected(items=opted_out)
        items[:] = [item for item in items if not item.get_closest_marker("docker")]


def pytest_report_header() -> str:
    from ds_stack.postgres.testing import ServerSource

    try:
        return f"postgres: {ServerSource.from_environment().describe()}"
    except (ValueError, RuntimeError) as exc:
        return f"postgres: {exc}"


@pytest.fixture(scope="session")
def docker_engine() -> None:
    """Skips the test, saying why in one line, where no Docker engine answers."""
    from ds_stack.postgres.docker import docker_engine_reason

    reason = docker_engine_reason()
    if reason is not None:
        pytest.skip(reason)


@pytest.fixture(scope="session")
def postgres_source() -> ServerSource:
    """Where this run's Postgres servers come from (the environment's choice); with a Docker
    image and no Docker engine, the tests that need Postgres skip, saying why in one line."""
    from ds_stack.postgres.docker import docker_engine_reason
    from ds_stack.postgres.testing import ServerSource

    source = ServerSource.from_environment()
    if source.image is not None and (reason := docker_engine_reason()) is not None:
        pytest.skip(f"{source.image}: {reason}")
    return source


@pytest.fixture(scope="session")
def postgres(postgres_source: ServerSource) -> Iterator[PostgresServer]:
    """A Postgres server for the whole test session."""
    with postgres_source.server() as server:
        yield server


@pytest.fixture
def postgres_db(postgres: PostgresServer) -> Iterator[str]:
    """The URL of a new, empty database, dropped when the test ends."""
    name = "test_" + uuid.uuid4().hex[:16]
    url = postgres.create_database(name)
    try:
        yield url
    finally:
        postgres.drop_database(name)

"""pytest fixtures: one embedded Postgres per test session, a fresh database per test.

Registered as a pytest plugin (entry point ``pytest11``), so the tests of
every workspace member can ask for ``postgres`` or ``postgres_db``:

- ``postgres`` (session): the running ``EmbeddedPostgres``.
- ``postgres_db`` (function): the URL of a database created for the test
  and dropped after it; ``CREATE DATABASE`` copies a template, so it's cheap.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ds_stack.postgres import EmbeddedPostgres


@pytest.fixture(scope="session")
def postgres() -> Iterator[EmbeddedPostgres]:
    """A Postgres server for the whole test session, on a free loopback port."""
    from ds_stack.postgres import EmbeddedPostgres, PostgresConfig

    # Not under pytest's tmp_path: its base directory is private to the caller
    # (0700), and the server may run as another user, which must reach the data.
    data_dir = Path(tempfile.mkdtemp(prefix="ds-postgres-"))
    server = EmbeddedPostgres(PostgresConfig(data_dir=data_dir, durable=False))
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
def postgres_db(postgres: EmbeddedPostgres) -> Iterator[str]:
    """The URL of a new, empty database, dropped when the test ends."""
    name = "test_" + uuid.uuid4().hex[:16]
    url = postgres.create_database(name)
    try:
        yield url
    finally:
        postgres.drop_database(name)

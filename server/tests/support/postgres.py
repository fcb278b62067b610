"""The postgres backend's settings for a server process under test, and a Postgres to run it on."""

from __future__ import annotations

import contextlib
import uuid
from typing import TYPE_CHECKING

from ds_stack.postgres.testing import ServerSource

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ds_stack.postgres.testing import PostgresServer


def postgres_env(server: PostgresServer) -> dict[str, str]:
    """``DS_STORAGE__*`` for a server of its own on ``server``: a fresh schema each call."""
    return {
        "DS_STORAGE__POSTGRES_URL": server.url(),
        "DS_STORAGE__POSTGRES_SCHEMA": f"t_{uuid.uuid4().hex}",
    }


@contextlib.contextmanager
def running_postgres() -> Iterator[PostgresServer]:
    """The tests' Postgres (``DS_TEST_POSTGRES_*`` choose it) for as long as the block runs."""
    with ServerSource.from_environment().server() as server:
        yield server

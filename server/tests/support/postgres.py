"""The postgres backend's settings for a server process under test, and a Postgres to run it on."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from ds_stack.postgres import EmbeddedPostgres, PostgresConfig

if TYPE_CHECKING:
    from collections.abc import Iterator


def postgres_env(server: EmbeddedPostgres) -> dict[str, str]:
    """``DS_STORAGE__*`` for a server of its own on ``server``: a fresh schema each call."""
    return {
        "DS_STORAGE__POSTGRES_URL": server.url(),
        "DS_STORAGE__POSTGRES_SCHEMA": f"t_{uuid.uuid4().hex}",
    }


@contextlib.contextmanager
def running_postgres() -> Iterator[EmbeddedPostgres]:
    """A Postgres on a free loopback port for as long as the block runs."""
    # Not under a private (0700) temporary directory: the server may run as another user.
    data_dir = Path(tempfile.mkdtemp(prefix="ds-postgres-"))
    server = EmbeddedPostgres(PostgresConfig(data_dir=data_dir, durable=False))
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)

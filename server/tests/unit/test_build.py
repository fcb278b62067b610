"""Which build runs: ``ds-server --version`` and the start-up log line say."""

from __future__ import annotations

import os
import subprocess
import sys

from ds_server import build


def test_the_build_under_test_is_the_one_meant() -> None:
    # The tests import the sources (plain Python), unless make unit-compiled
    # put the compiled wheel first and said so.
    compiled = os.environ.get("DS_TEST_BUILD") == "compiled"
    assert build.is_compiled() is compiled
    assert build.describe().endswith("(compiled)" if compiled else "(plain Python)")


def test_version_names_the_release_and_the_build() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ds_server", "--version"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert done.stdout.strip() == build.describe()
    assert done.stdout.startswith("ds-server 0.1.0 ")

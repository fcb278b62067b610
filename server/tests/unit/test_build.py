"""Which build runs: ``ds-server --version`` and the start-up log line say."""

from __future__ import annotations

import subprocess
import sys

from ds_server import build


def test_the_editable_install_is_plain_python() -> None:
    # The tests import the sources, never the compiled wheel.
    assert not build.is_compiled()
    assert build.describe().endswith("(plain Python)")


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

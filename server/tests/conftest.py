"""What every server test shares: which build of ds-server is under test.

``make unit-compiled`` runs this whole suite again with the compiled build
(``make wheel``) first on ``PYTHONPATH`` and ``DS_TEST_BUILD=compiled``; the
servers the tests start as processes inherit both. The run stops at once
if the compiled modules did not load, so a broken build can't pass as
plain Python.
"""

from __future__ import annotations

import os

import pytest
from ds_server import build


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get("DS_TEST_BUILD") == "compiled" and not build.is_compiled():
        raise pytest.UsageError(
            "DS_TEST_BUILD=compiled, but ds_server runs as plain Python: "
            "is the compiled build (make wheel) first on PYTHONPATH?"
        )


def pytest_report_header(config: pytest.Config) -> str:
    return build.describe()

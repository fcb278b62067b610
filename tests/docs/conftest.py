"""A real ds-server behind a real Envoy, for the documentation's examples."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

# The gateway tests' stack: the same launcher, config and test-only key.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "proxy" / "tests"))
from gateway_stack import GatewayStack

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayStack]:
    stack = GatewayStack(tmp_path_factory.mktemp("gateway"))
    stack.start()
    try:
        yield stack
    finally:
        stack.stop()

"""Fixtures for the gateway tests: one real Envoy + ds-server stack per session."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx
import pytest
from gateway_stack import GatewayStack

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayStack]:
    gateway = GatewayStack(tmp_path_factory.mktemp("gateway"))
    gateway.start()
    try:
        yield gateway
    finally:
        gateway.stop()


@pytest.fixture
def client(stack: GatewayStack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stack.url, timeout=30.0) as http:
        yield http

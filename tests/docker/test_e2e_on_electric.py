"""e2e's Postgres → stream scenarios with ds-sync reading Electric's real image (Docker only).

The same test functions as e2e/test_e2e_sync.py, collected here with an
``e2e`` stack whose ds-sync has ``ELECTRIC_URL`` set: Electric runs on the
host's network and reads the stack's own Postgres (the embedded 18, as in
``make dev``); it waits for that Postgres to come up.
"""

from __future__ import annotations

import dataclasses
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "e2e"))

from ds_stack.dev import Stack
from ds_stack.ports import free_port
from e2e_stack import E2E, stack_config
from electric_docker import ELECTRIC_IMAGE, ELECTRIC_SECRET, electric_environment

# Collected here, with this module's e2e fixture.
from test_e2e_sync import (  # noqa: F401
    test_postgres_to_stream,
    test_update_and_delete_reach_the_stream,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def e2e(docker_engine: None) -> Iterator[E2E]:
    from testcontainers.core.container import DockerContainer

    electric_port = free_port()
    config = dataclasses.replace(
        stack_config(),
        electric_url=f"http://127.0.0.1:{electric_port}",
        sync_env={"DS_SYNC__ELECTRIC_SECRET": ELECTRIC_SECRET},
    )
    electric = (
        DockerContainer(ELECTRIC_IMAGE)
        .with_envs(**electric_environment(config.postgres_port, electric_port))
        .with_kwargs(network_mode="host")
    )
    stack = Stack(config)
    try:
        with electric:
            stack.start()
            yield E2E(stack)
    finally:
        stack.stop()
        shutil.rmtree(config.state, ignore_errors=True)

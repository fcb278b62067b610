"""The e2e suite: one stack for the run, started by the launcher ``make dev`` uses.

Every scenario talks to the stack from outside: HTTP through Envoy with a
token, and SQL on Postgres's port. Scenarios that kill or restart a
component (marked ``restarts``) run after the others, and each leaves the
stack whole again.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
# The docs' block reader (tests/docs/doc_blocks.py), for the docs runner.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "docs"))

from ds_stack.dev import Stack
from ds_stack.dev.cli import description
from ds_stack.dev.lock import StateLock
from e2e_stack import E2E, stack_config

if TYPE_CHECKING:
    from collections.abc import Iterator

HERE = Path(__file__).resolve().parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "restarts: kills or restarts a component of the shared stack (runs last)"
    )


def pytest_itemcollected(item: pytest.Item) -> None:
    """Under pytest-xdist (``--dist loadgroup``), the suite stays on one worker: one stack."""
    if item.path.is_relative_to(HERE) and item.config.pluginmanager.hasplugin("xdist"):
        item.add_marker(pytest.mark.xdist_group("e2e"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Within this suite's tests, those that restart components go last (order kept)."""
    mine = [n for n, item in enumerate(items) if item.path.is_relative_to(HERE)]
    if not mine:
        return
    block = [items[n] for n in mine]
    ordered = [i for i in block if not i.get_closest_marker("restarts")] + [
        i for i in block if i.get_closest_marker("restarts")
    ]
    for n, item in zip(mine, ordered, strict=True):
        items[n] = item


@pytest.fixture(scope="session")
def e2e() -> Iterator[E2E]:
    """The whole stack, running, for the session.

    It describes itself in its state directory as `make dev` does, so that
    `ds-dev env`, `ds-dev psql` and `make analytics` reach it (the docs' commands).
    """
    config = stack_config()
    stack = Stack(config)
    lock = StateLock(config.state)
    try:
        lock.acquire()
        stack.start()
        lock.publish(description(config, stack))
        yield E2E(stack)
    finally:
        stack.stop()
        lock.release()
        shutil.rmtree(config.state, ignore_errors=True)

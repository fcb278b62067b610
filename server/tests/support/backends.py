"""Stores of every backend, started the way the server starts them, for the store suites."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from typing import TYPE_CHECKING, Any

import pytest
from ds_server.live import LiveNotifier
from ds_server.settings import Settings, StorageSection
from ds_server.stores.registry import open_store

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from ds_server.stores.base import Store

# Every backend the store suites run against. The postgres backend runs on every version of
# the Postgres matrix (`-m postgres`).
_POSTGRES = pytest.param("postgres", marks=pytest.mark.postgres)
BACKENDS = ["memory", "file-durable", "file-fast", "sqlite", _POSTGRES]
DURABLE_BACKENDS = ["file-durable", "file-fast", "sqlite", _POSTGRES]


def backend_storage(mode: str, data_dir: Path, postgres_url: str | None) -> StorageSection:
    """The storage section of ``mode``; postgres gets a schema of its own."""
    if mode == "postgres":
        assert postgres_url is not None
        # A schema of its own per call: cheaper than a database, as isolated.
        return StorageSection(
            mode="postgres", postgres_url=postgres_url, postgres_schema=f"t_{uuid.uuid4().hex}"
        )
    return StorageSection(mode=mode, data_dir=data_dir)


def backend_settings(storage: StorageSection, **sections: Any) -> Settings:
    """Settings with ``storage``, the given sections, and every other section's defaults."""
    # Every section is given, so no DS_* variable of the developer leaks in.
    defaults = {
        name: field.get_default(call_default_factory=True)
        for name, field in Settings.model_fields.items()
    }
    return Settings(**{**defaults, **sections, "storage": storage})


@contextlib.asynccontextmanager
async def started_store(settings: Settings) -> AsyncIterator[Store]:
    """The backend ``settings`` name, started, and stopped after the block."""
    live = LiveNotifier()
    live.bind(asyncio.get_running_loop())
    store = open_store(settings, live)
    await store.start()
    try:
        yield store
    finally:
        await store.stop()

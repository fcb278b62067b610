"""Backends chosen by name through a lazy ``module:Class`` table."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ds_server.live import LiveNotifier
    from ds_server.settings import Settings
    from ds_server.stores.base import Store

BACKENDS: dict[str, str] = {
    "memory": "ds_server.stores.memory:MemoryStore",
    "file-durable": "ds_server.stores.file:FileDurableStore",
    "file-fast": "ds_server.stores.file:FileFastStore",
    "sqlite": "ds_server.stores.sqlite:SqliteStore",
}


class UnknownBackendError(ValueError):
    """DS_STORAGE__MODE names no backend."""


def open_store(settings: Settings, live: LiveNotifier) -> Store:
    """Instantiate the backend ``settings.storage.mode`` names."""
    mode = settings.storage.mode
    target = BACKENDS.get(mode)
    if target is None:
        known = ", ".join(sorted(BACKENDS))
        raise UnknownBackendError(f"DS_STORAGE__MODE={mode!r} is not one of: {known}")
    module_name, class_name = target.split(":")
    backend = getattr(importlib.import_module(module_name), class_name)
    store: Store = backend.from_settings(settings, live)
    return store

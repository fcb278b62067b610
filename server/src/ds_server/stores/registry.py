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
# Backends that keep nothing on disk: DS_STORAGE__DATA_DIR means nothing to them.
WITHOUT_DATA_DIR = frozenset({"memory"})


class UnknownBackendError(ValueError):
    """DS_STORAGE__MODE names no backend."""


def known_backends() -> str:
    """The backend names, for messages: ``file-durable, file-fast, memory, sqlite``."""
    return ", ".join(sorted(BACKENDS))


def uses_data_dir(mode: str) -> bool:
    """Whether the backend ``mode`` stores under DS_STORAGE__DATA_DIR."""
    return mode not in WITHOUT_DATA_DIR


def open_store(settings: Settings, live: LiveNotifier) -> Store:
    """Instantiate the backend ``settings.storage.mode`` names."""
    mode = settings.storage.mode
    target = BACKENDS.get(mode)
    if target is None:
        raise UnknownBackendError(f"DS_STORAGE__MODE={mode!r} is not one of: {known_backends()}")
    module_name, class_name = target.split(":")
    backend = getattr(importlib.import_module(module_name), class_name)
    store: Store = backend.from_settings(settings, live)
    return store

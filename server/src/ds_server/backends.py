"""The storage backends by name (``DS_STORAGE__MODE``): a lazy ``module:function`` table.

Each names the function that builds the backend's ``Persistence`` from the
settings. Names only, so settings can check a mode without importing any
backend; ``stores.registry.open_store`` imports the one chosen.
"""

from __future__ import annotations

BACKENDS: dict[str, str] = {
    "memory": "ds_server.stores.memory:from_settings",
    "file-durable": "ds_server.stores.file:durable_from_settings",
    "file-fast": "ds_server.stores.file:fast_from_settings",
    "sqlite": "ds_server.stores.sqlite:from_settings",
    "postgres": "ds_server.stores.postgres:from_settings",
}
# Backends that keep nothing on disk: DS_STORAGE__DATA_DIR means nothing to them.
WITHOUT_DATA_DIR = frozenset({"memory", "postgres"})


def known_backends() -> str:
    """The backend names, for messages: ``file-durable, file-fast, memory, postgres, sqlite``."""
    return ", ".join(sorted(BACKENDS))


def uses_data_dir(mode: str) -> bool:
    """Whether the backend ``mode`` stores under DS_STORAGE__DATA_DIR."""
    return mode not in WITHOUT_DATA_DIR

"""Open the backend ``DS_STORAGE__MODE`` names (the table is ``ds_server.backends``)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ds_server.backends import BACKENDS, known_backends

if TYPE_CHECKING:
    from ds_server.live import LiveNotifier
    from ds_server.settings import Settings
    from ds_server.stores.base import Store


class UnknownBackendError(ValueError):
    """DS_STORAGE__MODE names no backend."""


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

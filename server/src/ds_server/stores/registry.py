"""Open the backend ``DS_STORAGE__MODE`` names (the table is ``ds_server.backends``).

A backend is its ``Persistence`` and the function that builds it from the
settings; the Store around it is the same for every backend, made here.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ds_server.backends import BACKENDS, known_backends
from ds_server.stores._log_store import LogStore
from ds_server.stores._quotas import quota_policy

if TYPE_CHECKING:
    from collections.abc import Callable

    from ds_server.live import LiveNotifier
    from ds_server.settings import Settings
    from ds_server.stores.base import Store
    from ds_server.stores.persistence import Persistence


class UnknownBackendError(ValueError):
    """DS_STORAGE__MODE names no backend."""


def persistence_from_settings(settings: Settings) -> Persistence:
    """The ``Persistence`` of the backend ``settings.storage.mode`` names (not opened yet)."""
    mode = settings.storage.mode
    target = BACKENDS.get(mode)
    if target is None:
        raise UnknownBackendError(f"DS_STORAGE__MODE={mode!r} is not one of: {known_backends()}")
    module_name, function_name = target.split(":")
    build: Callable[[Settings], Persistence] = getattr(
        importlib.import_module(module_name), function_name
    )
    return build(settings)


def open_store(settings: Settings, live: LiveNotifier) -> Store:
    """The Store over the backend ``settings.storage.mode`` names."""
    limits = settings.limits
    return LogStore(
        live,
        persistence_from_settings(settings),
        max_retained_bytes=limits.max_retained_bytes,
        max_snapshot_bytes=limits.max_snapshot_bytes,
        quotas=quota_policy(settings),
    )

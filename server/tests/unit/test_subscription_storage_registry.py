"""Every storage mode has a subscription store, and the right one."""

from __future__ import annotations

from pathlib import Path

import pytest
from ds_server.backends import BACKENDS
from ds_server.settings import Settings, StorageSection
from ds_server.subscriptions.storage import STORAGES, open_subscription_storage
from ds_server.subscriptions.storage.memory import MemorySubscriptionStorage
from ds_server.subscriptions.storage.registry import NoSubscriptionStorage
from ds_server.subscriptions.storage.sqlite import SqliteSubscriptionStorage


def test_every_backend_has_a_subscription_store() -> None:
    assert set(STORAGES) == set(BACKENDS)


@pytest.mark.parametrize("mode", ["sqlite", "file-durable", "file-fast"])
def test_durable_backends_keep_subscriptions_under_the_data_dir(mode: str) -> None:
    settings = Settings(storage=StorageSection(mode=mode, data_dir=Path("/srv/ds")))
    storage = open_subscription_storage(settings)
    assert isinstance(storage, SqliteSubscriptionStorage)
    assert storage.path == Path("/srv/ds/subscriptions/subscriptions.db")


def test_memory_keeps_them_in_memory() -> None:
    storage = open_subscription_storage(Settings(storage=StorageSection(mode="memory")))
    assert isinstance(storage, MemorySubscriptionStorage)


def test_a_mode_without_one_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(STORAGES, "memory")
    with pytest.raises(NoSubscriptionStorage, match="memory"):
        open_subscription_storage(Settings(storage=StorageSection(mode="memory")))

"""Where subscriptions outlive the process: one interface, one module per store."""

from __future__ import annotations

from ds_server.subscriptions.storage.base import (
    StoredLink,
    StoredSubscription,
    SubscriptionStorage,
    SubscriptionStorageError,
)
from ds_server.subscriptions.storage.memory import MemorySubscriptionStorage
from ds_server.subscriptions.storage.registry import STORAGES, open_subscription_storage

__all__ = [
    "STORAGES",
    "MemorySubscriptionStorage",
    "StoredLink",
    "StoredSubscription",
    "SubscriptionStorage",
    "SubscriptionStorageError",
    "open_subscription_storage",
]

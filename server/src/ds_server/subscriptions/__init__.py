"""Webhook and pull-wake subscriptions to streams (the reserved ``__ds`` API).

Subscriptions are kept in ``storage`` beside the streams (SQLite under the
data directory, Postgres for shared backends, nothing for ``memory``), so
they survive restarts.
"""

from __future__ import annotations

from ds_server.subscriptions.errors import SubscriptionError
from ds_server.subscriptions.manager import SubscriptionManager
from ds_server.subscriptions.model import Subscription, SubscriptionSpec, SubscriptionType

__all__ = [
    "Subscription",
    "SubscriptionError",
    "SubscriptionManager",
    "SubscriptionSpec",
    "SubscriptionType",
]

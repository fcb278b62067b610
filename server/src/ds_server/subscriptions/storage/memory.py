"""Subscriptions kept in this process only: the ``memory`` backend's.

The stream store forgets everything on restart, so there is nothing for
subscriptions to outlive. Also the double the manager's tests run against
(a new manager on the same instance is a restart).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ds_server.subscriptions.storage.base import StoredSubscription, SubscriptionStorage

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ds_server.subscriptions.storage.base import StoredLink


class MemorySubscriptionStorage(SubscriptionStorage):
    """A dict of records; every write is complete when it returns."""

    def __init__(self) -> None:
        self._subs: dict[str, StoredSubscription] = {}
        self._secrets: dict[str, bytes] = {}

    async def load_all(self) -> list[StoredSubscription]:
        return [self._subs[sub_id] for sub_id in sorted(self._subs)]

    async def create(self, sub: StoredSubscription) -> None:
        self._subs[sub.spec.id] = replace(sub, links=dict(sub.links))

    async def save(
        self, sub_id: str, generation: int, links: Mapping[str, StoredLink | None]
    ) -> None:
        stored = self._subs.get(sub_id)
        if stored is None:
            return
        merged = dict(stored.links)
        for path, link in links.items():
            if link is None:
                merged.pop(path, None)
            else:
                merged[path] = link
        self._subs[sub_id] = replace(
            stored, generation=max(stored.generation, generation), links=merged
        )

    async def delete(self, sub_id: str) -> None:
        self._subs.pop(sub_id, None)

    async def get_secret(self, name: str) -> bytes | None:
        return self._secrets.get(name)

    async def keep_secret(self, name: str, candidate: bytes) -> bytes:
        return self._secrets.setdefault(name, candidate)

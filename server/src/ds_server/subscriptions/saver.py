"""Writing a subscription's live state to storage, before anyone is told about it.

Callers hold the subscription's lock, so one subscription's writes happen in
the order its state changed. Only what changed is written: the paths marked
unsaved and the generation. A write that fails leaves the marks in place,
so the next write of the subscription carries the change too.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from ds_server.subscriptions.errors import StorageUnavailable
from ds_server.subscriptions.storage import (
    StoredLink,
    StoredSubscription,
    SubscriptionStorageError,
)

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from ds_server.subscriptions.model import Link, Subscription
    from ds_server.subscriptions.storage import SubscriptionStorage


def stored_link(link: Link) -> StoredLink:
    """A live link as storage keeps it."""
    return StoredLink(explicit=link.explicit, glob=link.glob, acked=link.acked)


def record(sub: Subscription) -> StoredSubscription:
    """The whole subscription as storage keeps it."""
    return StoredSubscription(
        spec=sub.spec,
        root_url=sub.root_url,
        created_at=sub.created_at,
        generation=sub.generation,
        links={path: stored_link(link) for path, link in sub.links.items()},
    )


class Saver:
    """Creates, updates and deletes subscriptions in storage; StorageUnavailable on failure."""

    def __init__(self, storage: SubscriptionStorage) -> None:
        self.storage = storage

    async def create(self, sub: Subscription) -> None:
        """Store a new subscription whole (lock held)."""
        whole = record(sub)
        with _unavailable():
            await self.storage.create(whole)
        _mark_saved(sub, whole.generation, whole.links)

    async def save(self, sub: Subscription) -> None:
        """Store what changed since the last save (lock held); a deleted one is skipped."""
        if sub.deleted or not sub.dirty:
            return
        generation = sub.generation
        links = {path: _maybe(sub.links.get(path)) for path in sorted(sub.unsaved)}
        with _unavailable():
            await self.storage.save(sub.id, generation, links)
        _mark_saved(sub, generation, links)

    async def delete(self, sub_id: str) -> None:
        """Forget the subscription (lock held)."""
        with _unavailable():
            await self.storage.delete(sub_id)

    async def keep_secret(self, name: str, candidate: bytes) -> bytes:
        """The stored secret ``name``, storing ``candidate`` if there is none."""
        with _unavailable():
            return await self.storage.keep_secret(name, candidate)


def _maybe(link: Link | None) -> StoredLink | None:
    return None if link is None else stored_link(link)


def _mark_saved(
    sub: Subscription, generation: int, written: Mapping[str, StoredLink | None]
) -> None:
    sub.saved_generation = generation
    # Stream events change links without the lock: a path that changed again
    # while the write was in flight stays unsaved.
    for path, link in written.items():
        if _maybe(sub.links.get(path)) == link:
            sub.unsaved.discard(path)


@contextlib.contextmanager
def _unavailable() -> Iterator[None]:
    """Turns a storage failure into the API's 503, keeping the cause for the log."""
    try:
        yield
    except SubscriptionStorageError as exc:
        raise StorageUnavailable() from exc

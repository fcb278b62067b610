"""What the saver writes, and what it then counts as saved."""

from __future__ import annotations

import pytest
from ds_server.subscriptions import membership
from ds_server.subscriptions.errors import StorageUnavailable
from ds_server.subscriptions.model import Subscription, SubscriptionSpec, SubscriptionType
from ds_server.subscriptions.saver import Saver
from ds_server.subscriptions.storage import (
    MemorySubscriptionStorage,
    StoredLink,
    SubscriptionStorageError,
)


def _sub() -> Subscription:
    spec = SubscriptionSpec(
        id="s",
        type=SubscriptionType.WEBHOOK,
        pattern="events/*",
        streams=(),
        webhook_url="http://127.0.0.1/hook",
        wake_stream=None,
        lease_ttl_ms=1000,
        description=None,
    )
    return Subscription(spec=spec, root_url="http://h/v1/stream", created_at=1.0)


class _Broken(MemorySubscriptionStorage):
    async def save(self, *args: object) -> None:  # type: ignore[override]
        raise SubscriptionStorageError("no space left on device")


async def test_only_changes_are_written_then_marked_saved() -> None:
    storage = MemorySubscriptionStorage()
    saver = Saver(storage)
    sub = _sub()
    membership.link_on_data(sub, "events/a")
    await saver.create(sub)
    assert not sub.dirty
    membership.link_on_data(sub, "events/b")
    membership.forget_stream(sub, "events/a")
    sub.generation = 4
    await saver.save(sub)
    assert not sub.dirty
    (stored,) = await storage.load_all()
    assert stored.generation == 4
    assert dict(stored.links) == {"events/b": StoredLink(explicit=False, glob=True, acked=-1)}


async def test_a_change_made_while_writing_stays_unsaved() -> None:
    storage = MemorySubscriptionStorage()
    sub = _sub()
    membership.link_on_data(sub, "events/a")

    class Racing(MemorySubscriptionStorage):
        async def save(self, *args: object) -> None:  # type: ignore[override]
            # A stream event lands while the write is in flight.
            sub.links["events/a"].acked = 9

    await Saver(storage).create(sub)
    sub.links["events/a"].acked = 5
    sub.unsaved.add("events/a")
    await Saver(Racing()).save(sub)
    assert sub.unsaved == {"events/a"}


async def test_a_failed_write_is_a_503_and_keeps_the_marks() -> None:
    sub = _sub()
    membership.link_on_data(sub, "events/a")
    sub.generation = 2
    with pytest.raises(StorageUnavailable) as raised:
        await Saver(_Broken()).save(sub)
    assert raised.value.status == 503
    assert isinstance(raised.value.__cause__, SubscriptionStorageError)
    assert sub.unsaved == {"events/a"}
    assert sub.saved_generation == 0


async def test_a_deleted_subscription_is_not_written() -> None:
    sub = _sub()
    membership.link_on_data(sub, "events/a")
    sub.deleted = True
    await Saver(_Broken()).save(sub)  # would raise if it wrote

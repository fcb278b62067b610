"""The manager across a restart: a second manager on the same store and subscription storage.

The stream store (memory) and the subscription storage (its in-memory
implementation) are shared by both managers, as a data directory is by two
server processes; the first manager is closed, as if it had stopped.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest
from ds_server.live import LiveNotifier
from ds_server.stores._log_store import LogStore
from ds_server.stores.base import AppendRequest, CreateRequest
from ds_server.stores.memory import MemoryPersistence
from ds_server.subscriptions import SubscriptionManager
from ds_server.subscriptions.errors import (
    Fenced,
    NoPendingWork,
    StorageUnavailable,
    SubscriptionNotFound,
)
from ds_server.subscriptions.model import SubscriptionSpec, SubscriptionType
from ds_server.subscriptions.payloads import AckBody, AckItem
from ds_server.subscriptions.storage import (
    MemorySubscriptionStorage,
    StoredLink,
    SubscriptionStorageError,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping

    from ds_server.subscriptions.storage import StoredSubscription

JSON = "application/json"
ROOT = "http://h/v1/stream"


class FlakyStorage(MemorySubscriptionStorage):
    """In-memory storage whose writes fail while ``failing`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.failing = False

    def _check(self) -> None:
        if self.failing:
            raise SubscriptionStorageError("disk on fire")

    async def create(self, sub: StoredSubscription) -> None:
        self._check()
        await super().create(sub)

    async def save(
        self, sub_id: str, generation: int, links: Mapping[str, StoredLink | None]
    ) -> None:
        self._check()
        await super().save(sub_id, generation, links)


class World:
    """One store and one subscription storage; managers come and go on them."""

    def __init__(self) -> None:
        self.live = LiveNotifier()
        self.store = LogStore(self.live, MemoryPersistence(1 << 24), max_retained_bytes=1 << 20)
        self.storage = FlakyStorage()
        self.managers: list[SubscriptionManager] = []

    async def manager(self) -> SubscriptionManager:
        for old in self.managers:
            await old.close()
        manager = SubscriptionManager(self.store, storage=self.storage)
        await manager.start()
        self.managers.append(manager)
        return manager

    async def write(self, manager: SubscriptionManager, path: str, event: bytes) -> int:
        result = await self.store.append(AppendRequest(path, JSON, (event,)))
        manager.data_arrived(path)
        return (await self.store.head(path)).tail if result else -1


@pytest.fixture
async def world() -> AsyncIterator[World]:
    world = World()
    world.live.bind(asyncio.get_running_loop())
    await world.store.start()
    for path in ("events/a", "wakes/w"):
        await world.store.create(CreateRequest(path, JSON))
    yield world
    for manager in world.managers:
        await manager.close()
    await world.store.stop()


def _pull_spec(sub_id: str = "pull") -> SubscriptionSpec:
    return SubscriptionSpec(
        id=sub_id,
        type=SubscriptionType.PULL_WAKE,
        pattern="events/*",
        streams=(),
        webhook_url=None,
        wake_stream="wakes/w",
        lease_ttl_ms=60_000,
        description=None,
    )


def _ack(grant: Mapping[str, object], offset: str, *, done: bool) -> AckBody:
    return AckBody(
        wake_id=str(grant["wake_id"]),
        generation=int(str(grant["generation"])),
        acks=[AckItem(stream="events/a", offset=offset)],
        done=done,
    )


async def _settled(manager: SubscriptionManager) -> None:
    """Let the manager's background tasks (pokes, saves) run."""
    for _ in range(5):
        await asyncio.sleep(0)


async def test_acks_and_generations_outlive_the_manager(world: World) -> None:
    first = await world.manager()
    await first.put(_pull_spec(), ROOT)
    tail = await world.write(first, "events/a", b'{"n":1}')
    await _settled(first)
    grant = await first.claim("pull", "worker-1")
    offset = grant["streams"][0]["tail_offset"]
    await first.settle(
        "pull", SubscriptionType.PULL_WAKE, grant["token"], _ack(grant, offset, done=True)
    )
    await world.write(first, "events/a", b'{"n":2}')
    await _settled(first)
    stale = await first.claim("pull", "worker-1")  # outstanding when the server "dies"

    second = await world.manager()
    sub = second.get("pull")
    assert sub.links["events/a"].acked == tail
    assert sub.created_at == first.get("pull").created_at
    # The pending work woke again, under a generation never handed out before.
    assert sub.wake is not None
    assert sub.wake.generation > stale["generation"]
    with pytest.raises(Fenced):
        await second.settle(
            "pull", SubscriptionType.PULL_WAKE, stale["token"], _ack(stale, offset, done=True)
        )
    fresh = await second.claim("pull", "worker-2")
    assert fresh["generation"] == sub.wake.generation
    end = fresh["streams"][0]["tail_offset"]
    await second.settle(
        "pull", SubscriptionType.PULL_WAKE, fresh["token"], _ack(fresh, end, done=True)
    )

    third = await world.manager()
    assert third.get("pull").links["events/a"].acked > tail
    assert third.get("pull").wake is None  # nothing pending: no wake
    with pytest.raises(NoPendingWork):
        await third.claim("pull", "worker-3")


async def test_a_deleted_subscription_stays_deleted(world: World) -> None:
    first = await world.manager()
    await first.put(_pull_spec("gone"), ROOT)
    await first.put(_pull_spec("kept"), ROOT)
    await first.delete("gone")
    second = await world.manager()
    with pytest.raises(SubscriptionNotFound):
        second.get("gone")
    assert second.get("kept").spec == _pull_spec("kept")


async def test_links_to_streams_gone_meanwhile_are_reconciled(world: World) -> None:
    first = await world.manager()
    await first.put(_pull_spec(), ROOT)
    await world.write(first, "events/a", b"{}")
    await world.store.create(CreateRequest("events/b", JSON))
    await world.write(first, "events/b", b'{"n":1}')
    await _settled(first)
    await first.close()
    # Gone while no server ran: the glob link goes with it.
    await world.store.delete("events/b")
    second = await world.manager()
    assert sorted(second.get("pull").links) == ["events/a"]
    assert [sub.links for sub in await world.storage.load_all()] == [
        {"events/a": StoredLink(explicit=False, glob=True, acked=-1)}
    ]


async def test_a_signing_key_is_kept_before_a_webhook_uses_it(world: World) -> None:
    first = await world.manager()
    spec = SubscriptionSpec(
        id="hook",
        type=SubscriptionType.WEBHOOK,
        pattern="events/*",
        streams=(),
        webhook_url="https://hooks.example/x",
        wake_stream=None,
        lease_ttl_ms=60_000,
        description=None,
    )
    await first.put(spec, ROOT)
    second = await world.manager()
    assert second.key.kid == first.key.kid


async def test_storage_failure_refuses_the_request_and_changes_nothing_stored(
    world: World,
) -> None:
    manager = await world.manager()
    world.storage.failing = True
    with pytest.raises(StorageUnavailable):
        await manager.put(_pull_spec(), ROOT)
    with pytest.raises(SubscriptionNotFound):
        manager.get("pull")

    world.storage.failing = False
    await manager.put(_pull_spec(), ROOT)
    await world.write(manager, "events/a", b"{}")
    await _settled(manager)
    grant = await manager.claim("pull", "w")
    offset = grant["streams"][0]["tail_offset"]
    world.storage.failing = True
    with pytest.raises(StorageUnavailable):
        await manager.settle(
            "pull", SubscriptionType.PULL_WAKE, grant["token"], _ack(grant, offset, done=False)
        )
    assert (await world.storage.load_all())[0].links["events/a"].acked == -1
    # The retried ack is stored once storage is back.
    world.storage.failing = False
    await manager.settle(
        "pull", SubscriptionType.PULL_WAKE, grant["token"], _ack(grant, offset, done=True)
    )
    assert (await world.storage.load_all())[0].links["events/a"].acked == int(offset)


async def test_a_wake_that_could_not_be_stored_starts_once_storage_is_back(world: World) -> None:
    manager = await world.manager()
    await manager.put(_pull_spec(), ROOT)
    world.storage.failing = True
    await world.write(manager, "events/a", b"{}")
    await world.write(manager, "events/a", b"{}")
    await _settled(manager)
    sub = manager.get("pull")
    assert sub.wake is None
    assert sub.wake_retrying
    world.storage.failing = False
    for _ in range(500):  # the first retry comes after about a second
        if sub.wake is not None:
            break
        await asyncio.sleep(0.01)
    assert sub.wake is not None
    assert not sub.wake_retrying
    (stored,) = await world.storage.load_all()
    assert stored.generation == sub.wake.generation
    assert "events/a" in stored.links

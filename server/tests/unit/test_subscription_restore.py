"""Stored subscriptions brought in line with the streams as they are at start."""

from __future__ import annotations

from ds_server.subscriptions import restore
from ds_server.subscriptions.model import SubscriptionSpec, SubscriptionType
from ds_server.subscriptions.storage import StoredLink, StoredSubscription


def _stored(**links: StoredLink) -> StoredSubscription:
    spec = SubscriptionSpec(
        id="s",
        type=SubscriptionType.WEBHOOK,
        pattern="events/*",
        streams=("manual/a",),
        webhook_url="http://127.0.0.1/hook",
        wake_stream=None,
        lease_ttl_ms=1000,
        description=None,
    )
    return StoredSubscription(spec, "http://h/v1/stream", 3.5, generation=7, links=links)


async def test_revived_subscription_is_what_was_stored_with_nothing_unsaved() -> None:
    sub = restore.revive(_stored(**{"events/a": StoredLink(False, True, 12)}))
    assert (sub.id, sub.created_at, sub.generation, sub.wake) == ("s", 3.5, 7, None)
    assert sub.links["events/a"].acked == 12
    assert not sub.dirty


async def test_links_follow_the_streams_that_exist() -> None:
    tails = {"events/kept": 10, "events/shrunk": 4, "manual/a": 0}
    sub = restore.revive(
        _stored(
            **{
                "events/kept": StoredLink(False, True, 8),
                "events/shrunk": StoredLink(False, True, 9),  # lost its tail (file-fast)
                "events/gone": StoredLink(False, True, 3),
                "manual/gone": StoredLink(True, True, 30),
                "manual/a": StoredLink(True, False, 0),
            }
        )
    )

    async def tail(path: str) -> int | None:
        return tails.get(path)

    existing = await restore.reconcile(sub, tail)
    assert existing == ["events/kept", "events/shrunk", "manual/a"]
    assert {path: (link.explicit, link.glob, link.acked) for path, link in sub.links.items()} == {
        "events/kept": (False, True, 8),
        "events/shrunk": (False, True, 4),
        "manual/gone": (True, False, 0),
        "manual/a": (True, False, 0),
    }
    assert sub.unsaved == {"events/shrunk", "events/gone", "manual/gone"}

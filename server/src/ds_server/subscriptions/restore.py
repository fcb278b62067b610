"""Subscriptions back from storage, checked against the streams as they are now.

Stored links can be behind the streams: a stream may have expired, or lost
an unsynced tail (``file-fast``) while the server was down. Glob links to
streams that are gone are dropped (a stream that comes back links again with
its first data); explicit ones stay, from offset zero, as after a delete;
an ack past a stream's tail comes back to the tail. The outstanding wake of
before is not restored: the manager starts a new one if work is pending.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ds_server.subscriptions.model import Link, Subscription

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from ds_server.subscriptions.storage import StoredSubscription


def revive(stored: StoredSubscription) -> Subscription:
    """The live subscription a stored one describes, with nothing unsaved."""
    return Subscription(
        spec=stored.spec,
        root_url=stored.root_url,
        created_at=stored.created_at,
        links={
            path: Link(explicit=link.explicit, glob=link.glob, acked=link.acked)
            for path, link in stored.links.items()
        },
        generation=stored.generation,
        saved_generation=stored.generation,
    )


async def reconcile(sub: Subscription, tail: Callable[[str], Awaitable[int | None]]) -> list[str]:
    """Bring the links in line with the streams; the linked paths that exist."""
    existing = []
    for path, link in sorted(sub.links.items()):
        position = await tail(path)
        if position is None:
            if not link.explicit:
                del sub.links[path]
                sub.unsaved.add(path)
            elif link.acked != 0 or link.glob:
                link.acked, link.glob = 0, False
                sub.unsaved.add(path)
            continue
        existing.append(path)
        if link.acked > position:
            link.acked = position
            sub.unsaved.add(path)
    return existing

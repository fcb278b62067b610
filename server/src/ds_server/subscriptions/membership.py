"""Which streams a subscription covers: glob matches and explicit links.

Pure operations on ``Subscription.links``; the manager decides when to call
them and supplies stream tails it read from the store. Every change marks
the path unsaved, for the manager to write to storage.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ds_server.subscriptions.model import NOTHING_ACKED, Link
from ds_server.subscriptions.patterns import matches

if TYPE_CHECKING:
    from ds_server.subscriptions.model import Subscription


def pattern_matches(sub: Subscription, path: str) -> bool:
    """Whether ``path`` falls under the subscription's glob."""
    return sub.spec.pattern is not None and matches(sub.spec.pattern, path)


def link_existing(sub: Subscription, path: str, tail: int | None) -> None:
    """Link a stream that existed when the subscription was made; its old data is not pending."""
    if path not in sub.links and pattern_matches(sub, path):
        sub.links[path] = Link(explicit=False, glob=True, acked=tail if tail is not None else 0)
        sub.unsaved.add(path)


def link_on_data(sub: Subscription, path: str) -> bool:
    """Note that ``path`` got data; True when it belongs to the subscription.

    A glob match seen for the first time is linked from the very beginning,
    so everything it holds is pending.
    """
    link = sub.links.get(path)
    glob = pattern_matches(sub, path)
    if link is None:
        if not glob:
            return False
        sub.links[path] = Link(explicit=False, glob=True, acked=NOTHING_ACKED)
        sub.unsaved.add(path)
        return True
    if glob and not link.glob:
        link.glob = True
        sub.unsaved.add(path)
    return True


def link_explicit(sub: Subscription, path: str, tail: int | None) -> None:
    """Link ``path`` explicitly; a new link starts at the current tail (0 if absent)."""
    link = sub.links.get(path)
    if link is None:
        acked = tail if tail is not None else 0
        sub.links[path] = Link(explicit=True, glob=pattern_matches(sub, path), acked=acked)
    elif link.explicit:
        return
    else:
        link.explicit = True
    sub.unsaved.add(path)


def unlink_explicit(sub: Subscription, path: str) -> None:
    """Drop the explicit link; a glob match stays linked with its ack position."""
    link = sub.links.get(path)
    if link is None or not link.explicit:
        return
    link.explicit = False
    if not link.glob:
        del sub.links[path]
    sub.unsaved.add(path)


def forget_stream(sub: Subscription, path: str) -> None:
    """``path`` was deleted: glob links go, explicit links restart from offset zero."""
    link = sub.links.get(path)
    if link is None:
        return
    if link.explicit:
        link.glob = False
        link.acked = 0
    else:
        del sub.links[path]
    sub.unsaved.add(path)


def unlink(sub: Subscription, path: str) -> None:
    """Drop ``path`` whatever linked it (it became a wake stream)."""
    if sub.links.pop(path, None) is not None:
        sub.unsaved.add(path)

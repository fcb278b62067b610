"""What a subscription store keeps, and the interface every implementation offers.

Kept per subscription: its configuration (the spec), the root URL it was
created through, when, the last wake generation handed out, and its links
with their ack positions. Kept per server: named secrets (the callback-token
key, the webhook signing key), so tokens and signatures stay verifiable
across restarts and by whichever process takes over.

Not kept: an outstanding wake, its token holder, its lease and webhook retry
state. After a restart (or a takeover, which is one) pending work wakes again
under a generation above every one handed out before, so no earlier token
can name the new wake.

Every write is durable when its awaitable returns; callers write before they
answer the request that caused the change.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ds_server.subscriptions.model import SubscriptionSpec


class SubscriptionStorageError(Exception):
    """Storage could not read or write (the database is down, the disk is full...)."""


@dataclass(frozen=True, slots=True)
class StoredLink:
    """One linked stream: why it is linked and how far it is acknowledged."""

    explicit: bool
    glob: bool
    acked: int  # byte position, or NOTHING_ACKED (-1)


@dataclass(frozen=True, slots=True)
class StoredSubscription:
    """A subscription as storage holds it."""

    spec: SubscriptionSpec
    root_url: str
    created_at: float
    generation: int
    links: Mapping[str, StoredLink] = field(default_factory=dict)


class SubscriptionStorage(abc.ABC):
    """Durable home of subscriptions; ``load_all`` after ``open`` gives everything back.

    A process that takes over the subscriptions (a restart, or another
    replica becoming the one that runs them) calls ``load_all`` and carries
    on from there. Writes of one subscription are never concurrent (the
    caller holds the subscription's lock), writes of different ones may be.
    """

    async def open(self) -> None:  # noqa: B027 - optional hook
        """Connect / create what is missing; before any other call."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections and threads."""

    @abc.abstractmethod
    async def load_all(self) -> list[StoredSubscription]:
        """Every stored subscription, with its links, ordered by id."""

    @abc.abstractmethod
    async def create(self, sub: StoredSubscription) -> None:
        """Store a new subscription and its links; replaces a leftover one with its id."""

    @abc.abstractmethod
    async def save(
        self, sub_id: str, generation: int, links: Mapping[str, StoredLink | None]
    ) -> None:
        """Raise the generation and upsert (or, for None, delete) the given links, atomically.

        The stored generation never goes down, even if a stale process
        writes, so no generation is handed out twice. A subscription that
        is not stored is left alone.
        """

    @abc.abstractmethod
    async def delete(self, sub_id: str) -> None:
        """Forget the subscription and its links; unknown ids are fine."""

    @abc.abstractmethod
    async def get_secret(self, name: str) -> bytes | None:
        """The secret stored under ``name``, or None."""

    @abc.abstractmethod
    async def keep_secret(self, name: str, candidate: bytes) -> bytes:
        """The secret under ``name``, storing ``candidate`` first if there is none.

        When two processes race, both get the one that was stored first.
        """

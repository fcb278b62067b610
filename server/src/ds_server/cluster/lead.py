"""Subscriptions on a cluster: the manager runs on the leader only, rebuilt at each election."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ds_server.stream_observer import StreamObserver

if TYPE_CHECKING:
    from collections.abc import Callable

    from ds_server.cluster.forwarding import Forwarder
    from ds_server.subscriptions import SubscriptionManager

log = logging.getLogger("ds_server.cluster")


class SubscriptionLead(StreamObserver):
    """The subscription manager while this replica leads; stream events go to it then only.

    Both this replica's own writes (through the routes) and other replicas'
    (through the store's change feed) arrive here; a replica that does not
    lead drops them, since the leader hears of them itself.
    """

    def __init__(self, build: Callable[[], SubscriptionManager]) -> None:
        self._build = build
        self.manager: SubscriptionManager | None = None
        # Passes subscription requests on to the leader when it is another replica.
        self.forward: Forwarder | None = None

    async def elected(self) -> None:
        manager = self._build()
        await manager.start()
        self.manager = manager

    async def deposed(self) -> None:
        manager, self.manager = self.manager, None
        if manager is not None:
            try:
                await manager.close()
            except Exception:
                log.exception("closing the subscriptions after losing the lead failed")

    def data_arrived(self, path: str) -> None:
        if self.manager is not None:
            self.manager.data_arrived(path)

    def stream_deleted(self, path: str) -> None:
        if self.manager is not None:
            self.manager.stream_deleted(path)

"""What a replica adds when it shares its store with others: the subscription lead."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ds_server.cluster.forwarding import Forwarder
from ds_server.cluster.lead import SubscriptionLead
from ds_server.cluster.leadership import Leadership

if TYPE_CHECKING:
    from collections.abc import Callable

    from ds_server.postgres_database import PostgresDatabase
    from ds_server.settings import Settings
    from ds_server.stores.base import Store
    from ds_server.subscriptions import SubscriptionManager


class Cluster:
    """The subscription leader election, the manager it runs, and forwarding to the leader."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        database: PostgresDatabase,
        build: Callable[[], SubscriptionManager],
    ) -> None:
        self._store = store
        self.lead = SubscriptionLead(build)
        server = settings.server
        advertise = settings.cluster.advertise_url or f"http://{server.host}:{server.port}"
        self.leadership = Leadership(
            database,
            advertise,
            on_elected=self.lead.elected,
            on_deposed=self.lead.deposed,
        )
        self.forwarder = Forwarder(self.leadership)
        self.lead.forward = self.forwarder

    @classmethod
    def of(
        cls,
        settings: Settings,
        store: Store,
        database: PostgresDatabase | None,
        build: Callable[[], SubscriptionManager],
    ) -> Cluster | None:
        """A cluster when ``store`` is shared with other processes (on ``database``)."""
        if getattr(store, "shared", None) is None or database is None:
            return None
        return cls(settings, store, database, build)

    async def start(self) -> None:
        shared = getattr(self._store, "shared", None)
        if shared is not None:
            # Writes through other replicas reach the subscriptions too.
            shared.events = self.lead
        await self.leadership.start()

    async def stop(self) -> None:
        await self.leadership.stop()
        await self.forwarder.close()

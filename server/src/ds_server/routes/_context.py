"""What handlers need from the running server, kept on the application state."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from litestar import Request

from ds_server.routes._fanout import Tails
from ds_server.routes._sse import SharedFrames, SseReads
from ds_server.stream_observer import StreamObserver

if TYPE_CHECKING:
    from ds_server.cluster.lead import SubscriptionLead
    from ds_server.settings import Settings
    from ds_server.stores.base import Store


@dataclass(slots=True)
class ServerContext:
    settings: Settings
    store: Store
    events: StreamObserver = field(default_factory=StreamObserver)
    # On a cluster: the subscription manager, while this replica runs them.
    lead: SubscriptionLead | None = None
    # What SSE readers share: frames, and the fan-out groups at streams' tails.
    sse: SseReads = field(init=False)

    def __post_init__(self) -> None:
        server = self.settings.server
        tails = Tails(self.store, server.read_chunk_bytes)
        self.sse = SseReads(self.store, server, SharedFrames(), tails)


STATE_KEY = "ds_context"

# Handlers don't use Litestar's typed user/auth/state slots.
AnyRequest = Request[Any, Any, Any]


def context(request: AnyRequest) -> ServerContext:
    """The server context of the app serving ``request``."""
    ctx: ServerContext = request.app.state[STATE_KEY]
    return ctx

"""What handlers need from the running server, kept on the application state."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from litestar import Request

from ds_server.routes._sse import SharedFrames

if TYPE_CHECKING:
    from ds_server.routes._fanout import TailGroup
    from ds_server.settings import Settings
    from ds_server.stores.base import Store


class StreamEvents:
    """Observer of stream changes that other features (subscriptions) react to."""

    def data_arrived(self, path: str) -> None:
        """Data was written to ``path`` (create with a body, or an append)."""

    def stream_deleted(self, path: str) -> None:
        """``path`` was deleted."""


@dataclass(slots=True)
class ServerContext:
    settings: Settings
    store: Store
    # The URL prefix streams are mounted under, e.g. "/v1/stream".
    route_prefix: str = "/v1/stream"
    events: StreamEvents = field(default_factory=StreamEvents)
    sse_frames: SharedFrames = field(default_factory=SharedFrames)
    # Fan-out groups of SSE readers at a stream's tail, by (stream, base64).
    sse_groups: dict[object, TailGroup] = field(default_factory=dict)


STATE_KEY = "ds_context"

# Handlers don't use Litestar's typed user/auth/state slots.
AnyRequest = Request[Any, Any, Any]


def context(request: AnyRequest) -> ServerContext:
    """The server context of the app serving ``request``."""
    ctx: ServerContext = request.app.state[STATE_KEY]
    return ctx

"""What the HTTP layer tells a response about its client's connection.

ASGI's ``send`` can only wait when a client stops reading: it gives no way
to ask whether a write would wait. A writer serving many clients at once
(the SSE fan-out) must not wait on any one of them, so ds-server's HTTP
protocol puts this view of the connection in each request's scope, under
the ASGI ``extensions`` key ``CONNECTION``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

CONNECTION = "ds.connection"


class Connection(Protocol):
    """One client connection, as a response writer sees it."""

    @property
    def write_blocked(self) -> bool:
        """The client has not taken what was written so far: a write now would wait."""
        ...

    @property
    def lost(self) -> bool:
        """The connection is closed or closing: nothing written now will arrive."""
        ...

    def on_lost(self, callback: Callable[[], None] | None) -> None:
        """Call ``callback`` once when the connection is lost (at once if it is).

        One at a time, for the response in progress; ``None`` forgets it.
        """
        ...


def connection_of(scope: Mapping[str, object]) -> Connection | None:
    """The connection of a request, if the server serving it says (ds-server's does)."""
    extensions = scope.get("extensions")
    if not isinstance(extensions, dict):
        return None
    connection: Connection | None = extensions.get(CONNECTION)
    return connection

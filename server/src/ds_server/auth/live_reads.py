"""Live reads (SSE and long-poll) per subject: how many one ``sub`` holds, and until when.

Envoy limits request *rates* per subject (its local rate limit filter,
docs/security.md); it has no way to count a subject's open responses. An
SSE or long-poll read holds a connection (and server memory) for up to a
minute, so the server counts them: past ``max_per_sub`` open live reads of
one subject, the next is refused with ``429`` until one ends. The count is
this process's: with several replicas behind the gateway a subject may hold
up to the cap on each.

A live read also ends when its token does: the guard leaves the verified
``exp`` in the request's scope (``TOKEN_EXPIRES_AT``) and the read ends at
that moment, after a complete frame, so the client resumes from its offset
with a fresh token (a live read whose token has already expired is refused
with ``401`` at once).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ds_server.edge.surfaces import stream_route
from ds_server.protocol.errors import BadRequest
from ds_server.routes._request import parse_read_query

if TYPE_CHECKING:
    from litestar.types import HTTPScope

# ASGI scope keys (edge.layer: per-request values live in the scope).
TOKEN_EXPIRES_AT: Final = "ds.token_expires_at"
_HELD_BY: Final = "ds.live_read_of"


def is_live_read(method: str, path: str, query: bytes) -> bool:
    """Whether a request is an SSE or long-poll read of a stream, read as the route reads it."""
    if method != "GET" or stream_route(path, method) is None:
        return False
    # Fast path: a query that can't spell ``live`` (not even percent-encoded) isn't one.
    if b"live" not in query and b"%" not in query:
        return False
    try:
        return parse_read_query(query).live is not None
    except BadRequest:
        return False  # the route answers 400; nothing is held


def token_expires_at(scope: HTTPScope) -> float | None:
    """The verified token's ``exp`` of a request, when the guard recorded one."""
    value = scope.get(TOKEN_EXPIRES_AT)
    return value if isinstance(value, float) else None


class LiveReadCounter:
    """Open live reads per subject, capped; ``admit`` before the read, ``release`` after."""

    def __init__(self, max_per_sub: int) -> None:
        self.max_per_sub = max_per_sub
        self._open: dict[str, int] = {}

    def admit(self, scope: HTTPScope, sub: str) -> bool:
        """Count one more live read of ``sub`` for this request; False when at the cap."""
        held = self._open.get(sub, 0)
        if held >= self.max_per_sub:
            return False
        self._open[sub] = held + 1
        scope[_HELD_BY] = sub  # type: ignore[typeddict-unknown-key]
        return True

    def release(self, scope: HTTPScope) -> None:
        """The request has ended: give back what ``admit`` counted for it, if anything."""
        sub = scope.pop(_HELD_BY, None)  # type: ignore[typeddict-item]
        if not isinstance(sub, str):
            return
        held = self._open.get(sub, 0) - 1
        if held > 0:
            self._open[sub] = held
        else:
            self._open.pop(sub, None)

    def open_reads(self, sub: str) -> int:
        """How many live reads ``sub`` holds now."""
        return self._open.get(sub, 0)

"""CORS and the browser security headers: the headers the edge adds to every response.

One policy for every response, whichever handler made it: preflights are
answered here, before routing, and every other response from an allowed
origin carries ``Access-Control-Allow-Origin`` and exposes the protocol's
headers (``protocol.headers.EXPOSED``) to scripts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ds_server.protocol import headers as h

if TYPE_CHECKING:
    from collections.abc import Iterable

Headers = list[tuple[bytes, bytes]]

# Protocol section 10.7: on every response, errors included.
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-content-type-options", b"nosniff"),
    (b"cross-origin-resource-policy", b"cross-origin"),
)
ALLOWED_METHODS = b"DELETE, GET, HEAD, OPTIONS, POST, PUT"
MAX_AGE_SECS = 600


class Cors:
    """The configured origins (``DS_HTTP__CORS_ORIGINS``; ``*`` allows any)."""

    __slots__ = ("_any", "_exposed", "_origins")

    def __init__(self, origins: Iterable[str]) -> None:
        origins = list(origins)
        self._any = "*" in origins
        self._origins = frozenset(origins)
        self._exposed = ", ".join(h.EXPOSED).encode("latin-1")

    def allows(self, origin: str) -> bool:
        return self._any or origin in self._origins

    def add_headers(self, headers: Headers, origin: str | None) -> None:
        """Add the security headers, and the CORS ones when ``origin`` is allowed."""
        headers.extend(SECURITY_HEADERS)
        if origin is not None and (self._any or origin in self._origins):
            if self._any:
                headers.append((b"access-control-allow-origin", b"*"))
            else:
                headers.append((b"access-control-allow-origin", origin.encode("latin-1")))
                headers.append((b"vary", b"Origin"))
            headers.append((b"access-control-expose-headers", self._exposed))

    def preflight(self, origin: str, requested_headers: str | None) -> tuple[int, Headers]:
        """The answer to a preflight from ``origin``: 204 when allowed, 400 otherwise."""
        headers: Headers = [*SECURITY_HEADERS]
        if not self.allows(origin):
            headers.append((b"vary", b"Origin"))
            return 400, headers
        allowed = b"*" if self._any else origin.encode("latin-1")
        headers += [
            (b"access-control-allow-origin", allowed),
            (b"access-control-allow-methods", ALLOWED_METHODS),
            (b"access-control-max-age", str(MAX_AGE_SECS).encode()),
        ]
        if not self._any:
            headers.append((b"vary", b"Origin"))
        if requested_headers:
            # Any request header is allowed: echo what the browser asks for.
            headers.append((b"access-control-allow-headers", requested_headers.encode("latin-1")))
        return 204, headers

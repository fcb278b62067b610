"""One log line per request (a request hook, see ``edge.layer.RequestHooks``).

What is logged is chosen so that no credential ever is: the path as routed
(``scope["path"]`` has no query string, where ``?access_token=`` travels),
and of the headers only ``x-request-id``, never ``Authorization``. The
request id is the gateway's (Envoy sets ``x-request-id``), or one made here.
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from litestar.types import HTTPScope

log = logging.getLogger("ds_server.access")

_STARTED = "ds.access.started"
_STATUS = "ds.access.status"
# A request id is an opaque token from the gateway; a longer one is cut.
_MAX_ID = 128


class AccessLog:
    """Logs method, path, status, duration and request id at ``info`` when a request ends."""

    def request_started(self, scope: HTTPScope) -> None:
        scope[_STARTED] = time.perf_counter()  # type: ignore[literal-required]

    def response_started(self, scope: HTTPScope, status: int) -> None:
        scope[_STATUS] = status  # type: ignore[literal-required]

    def request_finished(self, scope: HTTPScope) -> None:
        if not log.isEnabledFor(logging.INFO):
            return
        elapsed_ms = (time.perf_counter() - scope[_STARTED]) * 1000  # type: ignore[literal-required]
        status: int = scope.get(_STATUS, 0)  # type: ignore[assignment]
        request_id = _request_id(scope)
        method, path = scope["method"], _printable(scope["path"])
        log.info(
            "%s %s %d %.1fms id=%s",
            method,
            path,
            status,
            elapsed_ms,
            request_id,
            extra={
                "method": method,
                "path": path,
                "status": status,
                "duration_ms": round(elapsed_ms, 3),
                "request_id": request_id,
            },
        )


def _request_id(scope: HTTPScope) -> str:
    for name, value in scope["headers"]:
        if name == b"x-request-id":
            return _printable(value[:_MAX_ID].decode("latin-1"))
    return uuid.uuid4().hex


def _printable(text: str) -> str:
    # A percent-encoded newline in a path must not start a forged log line.
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")

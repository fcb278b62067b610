"""One log line per request (a request hook, see ``edge.layer.RequestHook``).

On the request's path the hook only records a tuple of what the line needs,
in one call when the request ends (the edge hands it the start and status);
the lines are made in batches (``request_lines``) every ``FLUSH_SECS`` on
the event loop and written by a thread (``line_writer``). Through
``logging``, a line cost about as much as the rest of an append: a record
object, a handler's lock, a formatter, a write to stderr each. ``close``
(at shutdown, after the last request) writes what is left and waits for it.

What is logged is chosen so that no credential ever is: the path as routed
(``scope["path"]`` has no query string, where ``?access_token=`` travels),
and of the headers only ``x-request-id``, never ``Authorization``. The
request id is the gateway's (Envoy sets ``x-request-id``), or one made here.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from time import perf_counter
from typing import TYPE_CHECKING, Final

from ds_server.observability.line_writer import LineWriter
from ds_server.observability.request_lines import LOGGER, dropped_line, lines

if TYPE_CHECKING:
    from collections.abc import Callable

    from litestar.types import HTTPScope

    from ds_server.observability.request_lines import Entry, LogFormat

# Its level decides whether requests are logged (``ds-server --log-level``).
log = logging.getLogger(LOGGER)

_REQUEST_ID: Final = b"x-request-id"
# How long a line may wait to be written, and how many may wait at most.
FLUSH_SECS: Final = 0.1
MAX_BATCH: Final = 8192


class AccessLog:
    """Logs method, path, status, duration and request id of every request, in batches."""

    def __init__(
        self,
        fmt: LogFormat = "text",
        writer: LineWriter | None = None,
        *,
        flush_secs: float = FLUSH_SECS,
    ) -> None:
        self._fmt = fmt
        self._writer = writer or LineWriter(
            sys.stderr.fileno(), lambda dropped: dropped_line(dropped, fmt).encode()
        )
        self._flush_secs = flush_secs
        self._pending: list[Entry] = []
        self._timer: asyncio.TimerHandle | None = None
        # An attribute, not the module's global: compiled, one look-up less per call.
        self._clock: Callable[[], float] = perf_counter

    def request_finished(self, scope: HTTPScope, started: float, status: int) -> None:
        pending = self._pending
        # Only the id's bytes are kept, not the headers: a tuple of plain
        # values is one the garbage collector stops tracking while it waits.
        request_id = None
        for name, value in scope["headers"]:
            if name == _REQUEST_ID:
                request_id = value
                break
        if not pending:  # the batch's first: (a list's truth costs less than its len())
            self._timer = asyncio.get_running_loop().call_later(self._flush_secs, self.flush)
        pending.append((started, self._clock(), scope["method"], scope["path"], status, request_id))
        if len(pending) >= MAX_BATCH:
            self.flush()

    def flush(self) -> None:
        """Hand the lines of every request so far to the writer (which writes them soon)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        entries, self._pending = self._pending, []
        if entries:
            text = lines(entries, self._fmt)
            self._writer.write(text.encode("utf-8", "backslashreplace"), len(entries))

    def close(self, timeout: float = 10.0) -> None:
        """Write every line so far and wait until written (or ``timeout``)."""
        self.flush()
        self._writer.drain(timeout)

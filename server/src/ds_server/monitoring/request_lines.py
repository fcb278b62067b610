"""Request log lines, made in batches from what the access log recorded per request.

A request only records a tuple (``Entry``); everything that costs (the
request id, escaping, the clock's text, the line itself) is done here, for
a whole batch at once, off the request's path. The lines are the ones
``logging`` made for each request before (``log_format``): the same text
line, the same JSON object with its keys in the same order.
"""

from __future__ import annotations

import time
import uuid
from itertools import count
from json.encoder import encode_basestring
from typing import TYPE_CHECKING, Final, Literal

if TYPE_CHECKING:
    from collections.abc import Iterable

# started and finished (perf_counter), method, path as routed, status (0: no
# response), the request's headers.
Entry = tuple[float, float, str, str, int, "Iterable[tuple[bytes, bytes]]"]
LogFormat = Literal["text", "json"]

LOGGER: Final = "ds_server.access"
_REQUEST_ID: Final = b"x-request-id"
# A request id is an opaque token from the gateway; a longer one is cut.
_MAX_ID: Final = 128
# Ids made here, for requests that came without one: 32 hex digits, a
# random half per process and a counter, unique without a random draw each.
_ID_PREFIX: Final = uuid.uuid4().hex[:16]
_made_ids = count()


def lines(entries: list[Entry], fmt: LogFormat) -> str:
    """The log lines of ``entries``, in order, each ending in a newline."""
    if fmt == "json":
        return _json_lines(entries)
    return _text_lines(entries)


def _text_lines(entries: list[Entry]) -> str:
    out: list[str] = []
    for started, finished, method, path, status, headers in entries:
        elapsed_ms = (finished - started) * 1000
        out.append(
            f"INFO {LOGGER} {method} {_printable(path)} {status} {elapsed_ms:.1f}ms "
            f"id={_request_id(headers)}\n"
        )
    return "".join(out)


def _json_lines(entries: list[Entry]) -> str:
    # Wall-clock time of a perf_counter reading: one offset for the batch.
    offset = time.time() - time.perf_counter()
    clock = _Clock()
    out: list[str] = []
    for started, finished, method, path, status, headers in entries:
        printable_path = _printable(path)
        request_id = _request_id(headers)
        elapsed_ms = (finished - started) * 1000
        message = f"{method} {printable_path} {status} {elapsed_ms:.1f}ms id={request_id}"
        out.append(
            f'{{"time": "{clock.text(finished + offset)}", "level": "info", '
            f'"logger": "{LOGGER}", "message": {encode_basestring(message)}, '
            f'"method": {encode_basestring(method)}, "path": {encode_basestring(printable_path)}, '
            f'"status": {status}, "duration_ms": {round(elapsed_ms, 3)!r}, '
            f'"request_id": {encode_basestring(request_id)}}}\n'
        )
    return "".join(out)


class _Clock:
    """``2026-11-26T22:14:41.123Z`` for a wall-clock time (a second's text is made once)."""

    def __init__(self) -> None:
        self.second = -1
        self.prefix = ""

    def text(self, wall: float) -> str:
        second = int(wall)
        if second != self.second:
            self.second = second
            self.prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        return f"{self.prefix}.{int((wall - second) * 1000):03d}Z"


def _request_id(headers: Iterable[tuple[bytes, bytes]]) -> str:
    for name, value in headers:
        if name == _REQUEST_ID:
            return _printable(value[:_MAX_ID].decode("latin-1"))
    return f"{_ID_PREFIX}{next(_made_ids):016x}"


def _printable(text: str) -> str:
    # A percent-encoded newline in a path must not start a forged log line.
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")


def dropped_line(dropped: int, fmt: LogFormat) -> str:
    """The line that says ``dropped`` lines were lost because stderr wasn't being read."""
    message = f"{dropped} request log lines dropped: nothing was reading the log"
    if fmt == "json":
        clock = _Clock()
        return (
            f'{{"time": "{clock.text(time.time())}", "level": "warning", '
            f'"logger": "{LOGGER}", "message": {encode_basestring(message)}}}\n'
        )
    return f"WARNING {LOGGER} {message}\n"

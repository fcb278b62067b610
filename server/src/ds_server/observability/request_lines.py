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
from typing import Final, Literal

# started and finished (perf_counter), method, path as routed, status (0: no
# response), the request's x-request-id header if it had one.
Entry = tuple[float, float, str, str, int, bytes | None]
LogFormat = Literal["text", "json"]

LOGGER: Final = "ds_server.access"
# A request id is an opaque token from the gateway; a longer one is cut.
_MAX_ID: Final = 128
# Ids made here, for requests that came without one: 32 hex digits, unique
# without a random draw each: 16 random per process, 8 counting batches, and
# 8 counting the batch's ids, in decimal (digits are hex digits too) from
# 10**7 so that there are 8 of them. A small int is the cheapest to write.
_ID_PREFIX: Final = uuid.uuid4().hex[:16]
_batches = count()
_FIRST_IN_BATCH: Final = 10**7
_CACHED_TENTHS: Final = 100_000


class _DurationTexts(dict[int, str]):
    """Durations in tenths of a millisecond as text, made once each (a float's
    text costs more than the rest of the line); up to 10 s.

    Indexed, a miss makes the text: a line costs one subscript, not a
    ``get``, a test and a call.
    """

    def __missing__(self, tenths: int) -> str:
        if tenths >= _CACHED_TENTHS or tenths < 0:
            return f"{tenths / 10:.1f}"
        text = self[tenths] = f"{tenths / 10:.1f}"
        return text


_DURATIONS: Final = _DurationTexts()


def lines(entries: list[Entry], fmt: LogFormat) -> str:
    """The log lines of ``entries``, in order, each ending in a newline."""
    if fmt == "json":
        return _json_lines(entries)
    return _text_lines(entries)


# A line's text up to its duration is the same for every request with the
# same method, path and status (clients hit the same streams again and
# again), so it is made once: for the text format the line's start, for
# JSON the message's start (escaped) and the fields that follow it. Emptied
# when full, so never more than this many.
_REMEMBERED: Final = 4096
_TEXT_STARTS: dict[tuple[str, str, int], str] = {}
_JSON_PARTS: dict[tuple[str, str, int], tuple[str, str]] = {}
# The start last made for each path, found by the path alone: most lines
# repeat their path's method and status, and a look-up by a string whose
# hash is kept costs less than building, hashing and comparing a key tuple.
_LAST_TEXT_START: dict[str, tuple[str, int, str]] = {}
_NO_START: Final = ("", -1, "")


def _text_lines(entries: list[Entry]) -> str:
    last_starts = _LAST_TEXT_START
    durations = _DURATIONS
    made_tail = f"ms id={_made_id_prefix()}"
    made = _FIRST_IN_BATCH
    out: list[str] = []
    for started, finished, method, path, status, given_id in entries:
        last_method, last_status, start = last_starts.get(path, _NO_START)
        if last_status != status or last_method != method:
            start = _text_start(method, path, status)
        # Tenths of a millisecond, rounded half up (``round`` costs a method
        # look-up and a call; the two differ only on an exact half).
        duration = durations[int((finished - started) * 10_000 + 0.5)]
        if given_id:
            out.append(f"{start}{duration}ms id={_request_id(given_id)}\n")
        else:
            made += 1
            out.append(f"{start}{duration}{made_tail}{made}\n")
    return "".join(out)


def _text_start(method: str, path: str, status: int) -> str:
    key = (method, path, status)
    start = _TEXT_STARTS.get(key)
    if start is None:
        if len(_TEXT_STARTS) >= _REMEMBERED:
            _TEXT_STARTS.clear()
            _LAST_TEXT_START.clear()
        start = _TEXT_STARTS[key] = f"INFO {LOGGER} {method} {_printable(path)} {status} "
    _LAST_TEXT_START[path] = (method, status, start)
    return start


def _json_lines(entries: list[Entry]) -> str:
    # Wall-clock time of a perf_counter reading: one offset for the batch.
    offset = time.time() - time.perf_counter()
    clock = _Clock()
    parts = _JSON_PARTS
    made_prefix = _made_id_prefix()
    made = _FIRST_IN_BATCH
    out: list[str] = []
    for started, finished, method, path, status, given_id in entries:
        key = (method, path, status)
        known = parts.get(key)
        if known is None:
            known = _json_parts(key)
        message_start, fields = known
        if given_id:
            # Escaping is per character: the id's escaped text serves both places.
            request_id = encode_basestring(_request_id(given_id))[1:-1]
        else:
            made += 1
            request_id = f"{made_prefix}{made}"
        elapsed_ms = (finished - started) * 1000
        out.append(
            f'{{"time": "{clock.text(finished + offset)}", "level": "info", '
            f'"logger": "{LOGGER}", "message": "{message_start}'
            f'{_duration(finished - started)}ms id={request_id}", {fields}'
            f'"duration_ms": {round(elapsed_ms, 3)!r}, "request_id": "{request_id}"}}\n'
        )
    return "".join(out)


def _json_parts(key: tuple[str, str, int]) -> tuple[str, str]:
    method, path, status = key
    if len(_JSON_PARTS) >= _REMEMBERED:
        _JSON_PARTS.clear()
    printable_path = _printable(path)
    message_start = encode_basestring(f"{method} {printable_path} {status} ")[1:-1]
    fields = (
        f'"method": {encode_basestring(method)}, "path": {encode_basestring(printable_path)}, '
        f'"status": {status}, '
    )
    known = _JSON_PARTS[key] = (message_start, fields)
    return known


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


def _duration(seconds: float) -> str:
    """Milliseconds, rounded to a tenth (``f"{ms:.1f}"``, made once per value below 10 s)."""
    if seconds < 0:
        return f"{seconds * 1000:.1f}"
    return _DURATIONS[int(seconds * 10_000 + 0.5)]


def _request_id(given: bytes | None) -> str:
    """The request's own id (the gateway's ``x-request-id``) as text, or "" if it had none."""
    if not given:
        return ""
    text = given[:_MAX_ID].decode("latin-1")
    return text if text.isprintable() else _escaped(text)


def _made_id_prefix() -> str:
    """The first 24 hex digits of the ids made for one batch's requests that came without one."""
    return f"{_ID_PREFIX}{next(_batches) % 16**8:08x}"


def _printable(text: str) -> str:
    return text if text.isprintable() else _escaped(text)


def _escaped(text: str) -> str:
    # A percent-encoded newline in a path must not start a forged log line.
    return text.encode("unicode_escape").decode("ascii")


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

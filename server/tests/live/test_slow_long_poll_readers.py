"""Long-poll readers that stop reading never hold up the others (issue 22).

A stalled long-poll reader has asked for the next offset and takes none of
the answer: a 1 MiB read (the default chunk) waits in its connection. The
waits below are correctness timeouts, far above what delivery takes.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from support.raw_readers import SMALL_RCVBUF, LongPollReader

if TYPE_CHECKING:
    from live_servers import Server

HOST = "127.0.0.1"
APPEND = 256 * 1024
DELIVERY_TIMEOUT_SECS = 10.0


def _open(
    server: Server, path: str, count: int, until: int, *, reading: bool
) -> list[LongPollReader]:
    return [
        LongPollReader(
            HOST,
            server.port,
            path,
            until=until,
            rcvbuf=None if reading else SMALL_RCVBUF,
            reading=reading,
        )
        for _ in range(count)
    ]


def _waiting() -> None:
    """Give the requests just sent time to reach the server and wait at the tail."""
    time.sleep(0.3)


def _close(readers: list[LongPollReader]) -> None:
    for reader in readers:
        reader.close()


def _append_all(server: Server, paths: list[str], data: bytes) -> None:
    for start in range(0, len(data), APPEND):
        for path in paths:
            server.append(path, data[start : start + APPEND])


def test_readers_that_stop_reading_do_not_stall_a_long_poll_reader(server: Server) -> None:
    path = server.new_stream()
    data = os.urandom(APPEND * 16)
    stalled = _open(server, path, 16, len(data), reading=False)
    (reader,) = _open(server, path, 1, len(data), reading=True)
    _waiting()
    try:
        _append_all(server, [path], data)
        assert reader.wait_for(len(data), DELIVERY_TIMEOUT_SECS), (
            f"the reader got {reader.received()} of {len(data)} bytes ({reader.error})"
        )
        assert reader.payload == data
    finally:
        _close([*stalled, reader])


def test_many_stalled_long_poll_readers_beside_one_fast_reader_of_each_stream(
    server: Server,
) -> None:
    path, other = server.new_stream(), server.new_stream()
    data = os.urandom(APPEND * 8)
    stalled = _open(server, path, 50, len(data), reading=False)
    stalled += _open(server, other, 50, len(data), reading=False)
    fast = _open(server, path, 1, len(data), reading=True)
    fast += _open(server, other, 1, len(data), reading=True)
    _waiting()
    try:
        _append_all(server, [path, other], data)
        for reader in fast:
            assert reader.wait_for(len(data), DELIVERY_TIMEOUT_SECS), (
                f"a reader got {reader.received()} of {len(data)} bytes ({reader.error})"
            )
            assert reader.payload == data
    finally:
        _close([*stalled, *fast])


def test_a_long_poll_reader_that_resumes_reading_gets_every_byte_in_order(server: Server) -> None:
    path = server.new_stream()
    data = os.urandom(APPEND * 8)
    more = os.urandom(APPEND * 2)
    total = len(data) + len(more)
    (paused,) = _open(server, path, 1, total, reading=False)
    (fast,) = _open(server, path, 1, total, reading=True)
    _waiting()
    try:
        _append_all(server, [path], data)
        assert fast.wait_for(len(data), DELIVERY_TIMEOUT_SECS)
        paused.start_reading()
        _append_all(server, [path], more)
        for reader in (paused, fast):
            assert reader.wait_for(total, DELIVERY_TIMEOUT_SECS), (
                f"a reader got {reader.received()} of {total} bytes ({reader.error})"
            )
            assert reader.payload == data + more
        assert paused.error is None
    finally:
        _close([paused, fast])

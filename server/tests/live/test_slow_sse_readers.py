"""SSE readers that stop reading never hold up the others (issue 22).

Each slow reader is a socket with a 4 KiB receive buffer that reads
nothing, so after a few hundred KiB the server cannot write to it. The
waits below are correctness timeouts: an unhindered reader gets these few
MiB in well under a second.
"""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING

from support.raw_readers import SMALL_RCVBUF, SseReader

if TYPE_CHECKING:
    from live_servers import Server

HOST = "127.0.0.1"
APPEND = 256 * 1024
DELIVERY_TIMEOUT_SECS = 10.0


def _connected(reader: SseReader) -> None:
    """Until the server has answered the reader (without reading a byte of it)."""
    reader.sock.recv(1, socket.MSG_PEEK)


def _open_stalled(server: Server, path: str, count: int) -> list[SseReader]:
    readers = [
        SseReader(HOST, server.port, path, rcvbuf=SMALL_RCVBUF, reading=False) for _ in range(count)
    ]
    for reader in readers:
        _connected(reader)
    return readers


def _open_reading(server: Server, path: str) -> SseReader:
    reader = SseReader(HOST, server.port, path)
    assert reader.wait_for(0, DELIVERY_TIMEOUT_SECS)
    return reader


def _close(readers: list[SseReader]) -> None:
    for reader in readers:
        reader.close()


def test_readers_that_stop_reading_do_not_stall_an_ordinary_reader(server: Server) -> None:
    # The reported case: non-reading subscribers joined first, then one that reads.
    path = server.new_stream()
    stalled = _open_stalled(server, path, 16)
    reader = _open_reading(server, path)
    try:
        data = os.urandom(APPEND * 16)
        for start in range(0, len(data), APPEND):
            server.append(path, data[start : start + APPEND])
        assert reader.wait_for(len(data), DELIVERY_TIMEOUT_SECS), (
            f"the reader got {reader.received()} of {len(data)} bytes"
        )
        assert reader.payload == data
    finally:
        _close([*stalled, reader])


def test_many_stalled_readers_beside_one_fast_reader_of_each_stream(server: Server) -> None:
    path, other = server.new_stream(), server.new_stream()
    stalled = _open_stalled(server, path, 50) + _open_stalled(server, other, 50)
    fast = _open_reading(server, path)
    fast_elsewhere = _open_reading(server, other)
    try:
        data = os.urandom(APPEND * 8)
        for start in range(0, len(data), APPEND):
            server.append(path, data[start : start + APPEND])
            server.append(other, data[start : start + APPEND])
        for reader in (fast, fast_elsewhere):
            assert reader.wait_for(len(data), DELIVERY_TIMEOUT_SECS), (
                f"a reader got {reader.received()} of {len(data)} bytes"
            )
            assert reader.payload == data
    finally:
        _close([*stalled, fast, fast_elsewhere])


def test_a_reader_that_resumes_reading_gets_every_byte_in_order(server: Server) -> None:
    path = server.new_stream()
    (paused,) = _open_stalled(server, path, 1)
    fast = _open_reading(server, path)
    try:
        data = os.urandom(APPEND * 8)
        for start in range(0, len(data), APPEND):
            server.append(path, data[start : start + APPEND])
        assert fast.wait_for(len(data), DELIVERY_TIMEOUT_SECS)
        # Appends go on while it is behind; it catches up on its own, then follows.
        paused.start_reading()
        more = os.urandom(APPEND * 2)
        server.append(path, more[:APPEND])
        assert paused.wait_for(len(data) + APPEND, DELIVERY_TIMEOUT_SECS), (
            f"the resumed reader got {paused.received()} of {len(data) + APPEND} bytes"
        )
        server.append(path, more[APPEND:])
        assert paused.wait_for(len(data) + len(more), DELIVERY_TIMEOUT_SECS)
        assert fast.wait_for(len(data) + len(more), DELIVERY_TIMEOUT_SECS)
        assert paused.payload == data + more
        assert fast.payload == data + more
        assert not paused.closed.is_set(), "the paused reader's connection was cut"
    finally:
        _close([paused, fast])

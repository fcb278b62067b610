"""A client that takes nothing for DS_SERVER__STALLED_READER_TIMEOUT_SECS is disconnected.

The suite's servers use 3 s. "Disconnected" is checked on the server's
side: the server process no longer holds the connection, so nothing of it
(buffers, a waiting response) is left. An SSE reader cut off this way
resumes from its last offset and loses nothing.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

import psutil
from live_servers import STALL_TIMEOUT_SECS
from support.raw_readers import SMALL_RCVBUF, SseReader, open_socket, request_head

if TYPE_CHECKING:
    import socket

    from live_servers import Server

HOST = "127.0.0.1"
APPEND = 1024 * 1024
# Enough that the kernel's buffers (up to 4 MiB each way on loopback) and the
# server's own fill up, so the server's writes pause.
STREAM_BYTES = 12 * APPEND
# The check runs once per stall period: cut within two periods, and some slack.
CUT_WITHIN_SECS = 2 * STALL_TIMEOUT_SECS + 5


def _held_by_server(server: Server, client: socket.socket) -> bool:
    port = client.getsockname()[1]
    connections = psutil.Process(server.process.pid).net_connections(kind="tcp")
    return any(c.raddr and c.raddr.port == port for c in connections)


def _accepted(server: Server, client: socket.socket) -> bool:
    deadline = time.monotonic() + 10
    while not _held_by_server(server, client):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def _cut(server: Server, clients: list[socket.socket]) -> bool:
    deadline = time.monotonic() + CUT_WITHIN_SECS
    while any(_held_by_server(server, client) for client in clients):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.2)
    return True


def test_clients_that_take_nothing_are_disconnected_and_resume_losslessly(
    server: Server,
) -> None:
    path = server.new_stream()
    data = os.urandom(STREAM_BYTES)
    for start in range(0, len(data), APPEND):
        server.append(path, data[start : start + APPEND])
    # An SSE reader from the start, and a client that pipelines catch-up reads
    # of the whole stream: neither reads a byte.
    sse = SseReader(HOST, server.port, path, rcvbuf=SMALL_RCVBUF, reading=False)
    pipelined = open_socket(HOST, server.port, SMALL_RCVBUF)
    head = request_head(f"{path}?offset=-1", f"{HOST}:{server.port}")
    pipelined.sendall(head * 16)
    try:
        assert _accepted(server, sse.sock)
        assert _accepted(server, pipelined)
        assert _cut(server, [sse.sock, pipelined]), "the server still holds a stalled client"
        # Meanwhile, and after, the server serves everyone else.
        assert server.http.get("/healthz").status_code == 200
        # The SSE client reads what reached it, then resumes from its last offset.
        sse.start_reading()
        assert sse.closed.wait(10)
        got = int(sse.next_offset) if sse.next_offset != "-1" else 0
        assert sse.payload[:got] == data[:got]
        resumed = SseReader(HOST, server.port, path, offset=sse.next_offset)
        try:
            assert resumed.wait_for(len(data) - got, 10)
            assert bytes(sse.payload[:got]) + bytes(resumed.payload) == data
        finally:
            resumed.close()
    finally:
        sse.close()
        pipelined.close()

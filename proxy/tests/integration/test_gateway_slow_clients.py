"""Slow and stalled clients through Envoy: none of them ties up the gateway or the server.

Readers are plain sockets (server/tests/support/raw_readers.py) whose
reading the test controls; a stalled one has a 4 KiB receive buffer and
reads nothing. The stack's ds-server disconnects a reader that takes
nothing for 3 s (DS_SERVER__STALLED_READER_TIMEOUT_SECS); Envoy's own
limits are the committed config's (docs/security.md). The stack is this
module's own: its SSE responses last the default 60 s, so idle readers
stay connected without reconnecting.
"""

from __future__ import annotations

import os
import selectors
import socket
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import psutil
import pytest
from gateway_stack import ADMIN, GatewayStack, bearer, unique

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "server" / "tests"))

from support.raw_readers import SMALL_RCVBUF, SseReader, request_head

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

HOST = "127.0.0.1"
OCTET = {"Content-Type": "application/octet-stream"}
APPEND = 256 * 1024
DELIVERY_TIMEOUT_SECS = 10.0
# Envoy's request_headers_timeout in both configs.
ENVOY_HEADERS_TIMEOUT_SECS = 10.0


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayStack]:
    gateway = GatewayStack(
        tmp_path_factory.mktemp("slow-clients"),
        server_env={"DS_SERVER__SSE_RECONNECT_INTERVAL_SECS": "60"},
    )
    gateway.start()
    try:
        yield gateway
    finally:
        gateway.stop()


@pytest.fixture
def client(stack: GatewayStack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stack.url, timeout=30.0) as http:
        yield http


def _stream(client: httpx.Client) -> str:
    path = f"/v1/stream/{unique('slow')}/s"
    response = client.put(path, headers={**bearer(ADMIN), **OCTET})
    assert response.status_code == 201, response.text
    return path


def _append(client: httpx.Client, path: str, data: bytes) -> None:
    for start in range(0, len(data), APPEND):
        response = client.post(
            path, content=data[start : start + APPEND], headers={**bearer(ADMIN), **OCTET}
        )
        assert response.status_code == 204, response.text


def _reader(stack: GatewayStack, path: str, *, reading: bool) -> SseReader:
    return SseReader(
        HOST,
        stack.listen_port,
        path,
        rcvbuf=None if reading else SMALL_RCVBUF,
        reading=reading,
        headers=bearer(ADMIN),
    )


def _until_closed(sock: socket.socket, timeout: float) -> bytes | None:
    """What arrives until the other side ends the connection; None if it doesn't in time."""
    sock.settimeout(timeout)
    deadline = time.monotonic() + timeout
    received = bytearray()
    try:
        while time.monotonic() < deadline:
            data = sock.recv(1 << 20)
            if not data:
                return bytes(received)
            received += data
    except ConnectionResetError:
        return bytes(received)
    except TimeoutError:
        pass
    return None


def test_slowloris_clients_get_408_from_envoy_and_everyone_else_is_served(
    stack: GatewayStack, client: httpx.Client
) -> None:
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"y" * 100
    slow = [socket.create_connection((HOST, stack.listen_port)) for _ in range(50)]
    answers: list[bytes] = []

    def trickle() -> None:
        # A byte per socket every 0.25 s: the head would take 30 s to finish.
        try:
            for byte in head:
                for sock in slow:
                    sock.send(bytes([byte]))
                time.sleep(0.25)
        except OSError:
            pass  # Envoy answered and closed

    sender = threading.Thread(target=trickle, daemon=True)
    sender.start()
    try:
        served_meanwhile = 0
        started = time.monotonic()
        while time.monotonic() - started < ENVOY_HEADERS_TIMEOUT_SECS - 2:
            assert client.get("/healthz").status_code == 200
            served_meanwhile += 1
            time.sleep(0.5)
        for sock in slow:
            answer = _until_closed(sock, ENVOY_HEADERS_TIMEOUT_SECS + 10)
            assert answer is not None, "Envoy still holds a slowloris connection"
            answers.append(answer)
        assert served_meanwhile > 0
        assert all(answer.startswith(b"HTTP/1.1 408") for answer in answers), answers[:1]
    finally:
        for sock in slow:
            sock.close()
        sender.join(timeout=40)


def test_stalled_readers_do_not_stall_a_reader_through_envoy(
    stack: GatewayStack, client: httpx.Client
) -> None:
    path = _stream(client)
    stalled = [_reader(stack, path, reading=False) for _ in range(8)]
    for reader in stalled:
        reader.sock.recv(1, socket.MSG_PEEK)  # answered, nothing read
    fast = _reader(stack, path, reading=True)
    try:
        assert fast.opened.wait(DELIVERY_TIMEOUT_SECS)
        data = os.urandom(APPEND * 16)
        _append(client, path, data)
        assert fast.wait_for(len(data), DELIVERY_TIMEOUT_SECS), (
            f"the reader got {fast.received()} of {len(data)} bytes"
        )
        assert fast.payload == data
    finally:
        for reader in [*stalled, fast]:
            reader.close()


def _server_connections(stack: GatewayStack) -> set[int]:
    """The client-side ports of the connections ds-server holds (Envoy's upstream ones)."""
    assert stack.server.pid is not None
    held = psutil.Process(stack.server.pid).net_connections(kind="tcp")
    return {c.raddr.port for c in held if c.raddr and c.status == psutil.CONN_ESTABLISHED}


def _until(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)
    return True


def test_a_reader_that_never_reads_is_disconnected_through_envoy(
    stack: GatewayStack, client: httpx.Client
) -> None:
    path = _stream(client)
    stalled = _reader(stack, path, reading=False)
    try:
        stalled.sock.recv(1, socket.MSG_PEEK)  # answered: its upstream connection is open
        # Among these: the reader's upstream connection, and idle pooled ones,
        # which Envoy keeps for 60 s without a request (its upstream idle
        # timeout): within the 15 s below, only the reader's can end.
        held = _server_connections(stack)
        data = os.urandom(APPEND * 48)  # 12 MiB: more than every buffer on the way
        _append(client, path, data)
        # ds-server resets the reader's connection once nothing moved for 3 s.
        assert _until(lambda: bool(held - _server_connections(stack)), 15), (
            "ds-server still holds the stalled reader's connection"
        )
        # Envoy stopped reading it when the client did, so it learns of the reset
        # when the client reads again (or at its stream idle timeout): the
        # client then gets what was in flight, and the end of the connection.
        received = _until_closed(stalled.sock, 10)
        assert received is not None, "the stalled reader's connection is still open"
        assert len(received) < len(data)
        # The gateway and the server go on serving.
        resumed = _reader(stack, path, reading=True)
        try:
            assert resumed.wait_for(len(data), DELIVERY_TIMEOUT_SECS)
            assert resumed.payload == data
        finally:
            resumed.close()
    finally:
        stalled.close()


def test_a_thousand_idle_sse_connections_through_envoy_all_get_live_data(
    stack: GatewayStack, client: httpx.Client
) -> None:
    path = _stream(client)
    head = request_head(f"{path}?offset=-1&live=sse", "x", bearer(ADMIN))
    selector = selectors.DefaultSelector()
    received: dict[socket.socket, bytearray] = {}
    try:
        for _ in range(1000):
            sock = socket.create_connection((HOST, stack.listen_port))
            sock.sendall(head)
            sock.setblocking(False)
            received[sock] = bytearray()
            selector.register(sock, selectors.EVENT_READ)
        # Every connection answered (its first control event), then one append for all.
        _read_all_until(selector, received, b"upToDate")
        assert all(data.startswith(b"HTTP/1.1 200") for data in received.values())
        _append(client, path, b"live")
        _read_all_until(selector, received, b"data:bGl2ZQ==\n")  # base64 of b"live"
    finally:
        selector.close()
        for sock in received:
            sock.close()


def _read_all_until(
    selector: selectors.BaseSelector, received: dict[socket.socket, bytearray], marker: bytes
) -> None:
    waiting = {sock for sock, data in received.items() if marker not in data}
    deadline = time.monotonic() + DELIVERY_TIMEOUT_SECS * 3
    while waiting:
        assert time.monotonic() < deadline, f"{len(waiting)} connections never got {marker!r}"
        for key, _ in selector.select(timeout=1.0):
            sock: socket.socket = key.fileobj  # type: ignore[assignment]
            data = sock.recv(65536)
            assert data, "Envoy closed an idle SSE connection"
            received[sock] += data
            if marker in received[sock]:
                waiting.discard(sock)

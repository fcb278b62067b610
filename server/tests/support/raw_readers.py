"""Stream readers on plain sockets, whose reading the test controls.

A reader can be opened with a small receive buffer and left unread, which
is what a stalled mobile client or a suspended tab looks like to a server:
its window closes, and the server's writes to it stop being accepted. It
can start reading later, and it keeps what it got in order, so a test can
check every byte. SSE and long-poll are both here; they speak HTTP/1.1
themselves, so nothing between the test and the server buffers for them.
"""

from __future__ import annotations

import base64
import contextlib
import json
import socket
import threading
import time
from dataclasses import dataclass, field

# Small enough that a few KiB fill the client's side of the connection.
SMALL_RCVBUF = 4096


def open_socket(host: str, port: int, rcvbuf: int | None = None) -> socket.socket:
    """A connected TCP socket; ``rcvbuf`` is set before connecting, so the window is small."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.settimeout(30.0)
    sock.connect((host, port))
    return sock


def peer_closed(sock: socket.socket) -> bool:
    """Whether the other side closed or reset the connection, found without reading from it."""
    state = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0]
    return state != _TCP_ESTABLISHED


_TCP_ESTABLISHED = 1  # tcpi_state, the first byte of Linux's struct tcp_info


def request_head(path: str, host: str, headers: dict[str, str] | None = None) -> bytes:
    lines = [f"GET {path} HTTP/1.1", f"Host: {host}"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


class ResponseError(AssertionError):
    """The server answered something a reader did not expect."""


@dataclass
class _Chunked:
    """Incremental HTTP/1.1 chunked-body decoder."""

    buffer: bytearray = field(default_factory=bytearray)
    ended: bool = False

    def feed(self, data: bytes) -> bytes:
        self.buffer += data
        out = bytearray()
        while not self.ended:
            line_end = self.buffer.find(b"\r\n")
            if line_end < 0:
                break
            size = int(bytes(self.buffer[:line_end]).split(b";")[0], 16)
            if len(self.buffer) < line_end + 2 + size + 2:
                break
            start = line_end + 2
            out += self.buffer[start : start + size]
            del self.buffer[: start + size + 2]
            if size == 0:
                self.ended = True
        return bytes(out)


def _split_head(buffer: bytearray) -> tuple[int, dict[str, str]] | None:
    """Status and headers (lower-cased names) once the head is complete; consumes it."""
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        return None
    lines = bytes(buffer[:end]).decode("latin-1").split("\r\n")
    del buffer[: end + 4]
    status = int(lines[0].split(" ")[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers


class SseReader:
    """One ``live=sse`` connection: its payload bytes in order and its last control offset.

    Reads on a thread of its own once ``start_reading`` is called (or at
    once with ``reading=True``); until then nothing is read, so with a small
    ``rcvbuf`` the server soon cannot write to it.
    """

    def __init__(
        self,
        host: str,
        port: int,
        path: str,
        offset: str = "-1",
        *,
        rcvbuf: int | None = None,
        reading: bool = True,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.sock = open_socket(host, port, rcvbuf)
        target = f"{path}?offset={offset}&live=sse"
        self.sock.sendall(request_head(target, f"{host}:{port}", headers))
        self.payload = bytearray()
        self.next_offset = offset
        self.status: int | None = None
        self.opened = threading.Event()  # the response head arrived
        self.closed = threading.Event()  # the server ended the response or the connection
        self.error: BaseException | None = None
        self._raw = bytearray()
        self._chunked = _Chunked()
        self._events = bytearray()
        self._base64 = False
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        if reading:
            self.start_reading()

    def start_reading(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()

    def received(self) -> int:
        with self._lock:
            return len(self.payload)

    def wait_for(self, size: int, timeout: float) -> bool:
        """Whether ``size`` payload bytes arrived within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while self.received() < size:
            if self.closed.is_set() or time.monotonic() >= deadline:
                return self.received() >= size
            time.sleep(0.01)
        return True

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        try:
            while not self._chunked.ended:
                data = self.sock.recv(256 * 1024)
                if not data:
                    break
                self._feed(data)
        except (OSError, ResponseError) as error:  # reset, closed by the test, or a bad answer
            self.error = error
        finally:
            self.closed.set()

    def _feed(self, data: bytes) -> None:
        if self.status is None:
            self._raw += data
            head = _split_head(self._raw)
            if head is None:
                return
            self.status, headers = head
            self.opened.set()
            if self.status != 200:
                raise ResponseError(f"SSE answered {self.status}")
            self._base64 = headers.get("stream-sse-data-encoding") == "base64"
            data, self._raw = bytes(self._raw), bytearray()
        self._events += self._chunked.feed(data)
        while (end := self._events.find(b"\n\n")) >= 0:
            block = bytes(self._events[:end]).decode("utf-8")
            del self._events[: end + 2]
            self._event(block)

    def _event(self, block: str) -> None:
        kind = ""
        data: list[str] = []
        for line in block.split("\n"):
            if line.startswith("event:"):
                kind = line[len("event:") :].strip()
            elif line.startswith("data:"):
                value = line[len("data:") :]
                data.append(value[1:] if value.startswith(" ") else value)
        text = "\n".join(data)
        if kind == "data":
            decoded = base64.b64decode(text) if self._base64 else text.encode("utf-8")
            with self._lock:
                self.payload += decoded
        elif kind == "control":
            self.next_offset = json.loads(text)["streamNextOffset"]


class LongPollReader:
    """Follows a stream with ``live=long-poll`` requests on one keep-alive connection.

    With ``reading=False`` it sends its first request and reads nothing
    until ``start_reading``; from then on it reads each answer and asks for
    the next offset, collecting the payload in order, until it has
    ``until`` bytes or ``stop`` is called.
    """

    def __init__(
        self,
        host: str,
        port: int,
        path: str,
        *,
        until: int,
        rcvbuf: int | None = None,
        reading: bool = True,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.host, self.port, self.path = host, port, path
        self.until = until
        self.headers = headers
        self.sock = open_socket(host, port, rcvbuf)
        self.payload = bytearray()
        self.next_offset = "-1"
        self.closed = threading.Event()
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._buffer = bytearray()
        self._send_request()
        self._thread: threading.Thread | None = None
        if reading:
            self.start_reading()

    def start_reading(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()

    def received(self) -> int:
        with self._lock:
            return len(self.payload)

    def wait_for(self, size: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while self.received() < size:
            if self.closed.is_set() or time.monotonic() >= deadline:
                return self.received() >= size
            time.sleep(0.01)
        return True

    def close(self) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _send_request(self) -> None:
        target = f"{self.path}?offset={self.next_offset}&live=long-poll"
        self.sock.sendall(request_head(target, f"{self.host}:{self.port}", self.headers))

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                status, headers, body = self._response()
                if status not in (200, 204):
                    raise ResponseError(f"long-poll answered {status}")
                with self._lock:
                    self.payload += body
                self.next_offset = headers["stream-next-offset"]
                if self.received() >= self.until:
                    break
                self._send_request()
        except (OSError, ResponseError) as error:
            self.error = error
        finally:
            self.closed.set()

    def _response(self) -> tuple[int, dict[str, str], bytes]:
        while (head := _split_head(self._buffer)) is None:
            self._recv()
        status, headers = head
        length = int(headers.get("content-length", "0"))
        while len(self._buffer) < length:
            self._recv()
        body = bytes(self._buffer[:length])
        del self._buffer[:length]
        return status, headers, body

    def _recv(self) -> None:
        data = self.sock.recv(256 * 1024)
        if not data:
            raise ConnectionError("the server closed the connection")
        self._buffer += data

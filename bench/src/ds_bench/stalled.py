"""Clients that open live reads and never read a byte: ``python -m ds_bench.stalled URL COUNT``.

Each socket has a 4 KiB receive buffer and advertises the segment size of
a real network (1,448 bytes, Ethernet's): on loopback's 64 KiB segments
the kernel would give the server's side a 4 MiB send buffer at once, and
a stalled client would swallow megabytes before the server saw it stall.
The process prints ``{"ready": n}`` once the server has answered every
connection (seen with ``MSG_PEEK``, which takes nothing), holds them until
its stdin closes, then prints its usage.
"""

from __future__ import annotations

import json
import resource
import socket
import sys
import time
from urllib.parse import urlsplit

RCVBUF = 4096
ETHERNET_MSS = 1448


def open_stalled(url: str, count: int) -> list[socket.socket]:
    """``count`` SSE reads of ``url`` from its start, each answered and then left unread."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    head = (
        f"GET {parts.path}?offset=-1&live=sse HTTP/1.1\r\nHost: {host}:{port}\r\n"
        "Accept: text/event-stream\r\nAccept-Encoding: identity\r\n\r\n"
    ).encode()
    sockets = []
    for _ in range(count):
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, ETHERNET_MSS)
        sock.settimeout(60)
        sock.connect((host, port))
        sock.sendall(head)
        sockets.append(sock)
    for sock in sockets:
        if not sock.recv(1, socket.MSG_PEEK):
            raise RuntimeError("the server closed a stalled reader before answering")
    return sockets


def main(argv: list[str] | None = None) -> None:
    url, count = (argv if argv is not None else sys.argv[1:])[:2]
    wall = time.perf_counter()
    sockets = open_stalled(url, int(count))
    print(json.dumps({"ready": len(sockets)}), flush=True)
    sys.stdin.read()  # until the orchestrator closes it
    for sock in sockets:
        sock.close()
    own = resource.getrusage(resource.RUSAGE_SELF)
    usage = {"cpu_s": own.ru_utime + own.ru_stime, "wall_s": time.perf_counter() - wall}
    print(json.dumps({"stalled": len(sockets), "usage": usage}), flush=True)


if __name__ == "__main__":
    main()

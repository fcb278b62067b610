"""The server's listening sockets, bound before anything else starts.

Binding first means a port that is taken, or a host that isn't this
machine's, stops ds-server with one line before it opens its store, instead
of after recovery with uvicorn's error. Sockets are made as asyncio's
``create_server`` makes them (one per address the host resolves to,
``SO_REUSEADDR``, IPv6 sockets IPv6-only), so serving is unchanged.
"""

from __future__ import annotations

import errno
import socket
from typing import Literal

# Which of the two settings an error is about.
Setting = Literal["host", "port"]

_HOST_ERRORS = frozenset({errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT})
_PORT_ERRORS = frozenset({errno.EADDRINUSE, errno.EACCES})


class ListenError(Exception):
    """The server can't listen at ``host:port``; ``setting`` names the one to change."""

    def __init__(self, setting: Setting, message: str) -> None:
        super().__init__(message)
        self.setting: Setting = setting


def bind(host: str, port: int) -> list[socket.socket]:
    """Bound (not yet listening) sockets for every address of ``host`` on ``port``."""
    try:
        infos = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as error:
        raise ListenError("host", f"can't resolve {host!r}: {error.strerror}") from None
    except OverflowError:
        raise ListenError("port", f"{port} is not a TCP port (0-65535)") from None
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(infos):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                sock.bind(address)
            except OSError as error:
                raise _listen_error(host, port, error) from None
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def _listen_error(host: str, port: int, error: OSError) -> ListenError:
    reason = error.strerror or str(error)
    if error.errno == errno.EADDRINUSE:
        return ListenError("port", f"{host}:{port} is already in use by another process")
    if error.errno in _PORT_ERRORS:
        return ListenError("port", f"can't listen on port {port}: {reason}")
    if error.errno in _HOST_ERRORS:
        return ListenError("host", f"can't listen on {host!r}: {reason}")
    return ListenError("port", f"can't listen on {host}:{port}: {reason}")

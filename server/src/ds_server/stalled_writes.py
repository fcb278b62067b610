"""Disconnect a client that stops taking what it is sent.

A client that stops reading (a suspended tab, a phone in a tunnel, a
stalled proxy) closes its TCP window; the server's writes to it pile up
in the transport until writing pauses. A paused response waits for its
client and holds its buffers, and the protocol lets a client resume from
its last offset after a reconnect, so a connection whose client takes
nothing for a while is worth more closed than kept.

A :class:`StallWatch` watches one connection while its writing is
paused: one timer per pause, none while data flows. Progress is counted
in bytes the client acknowledged, so a slow reader is told from one that
stopped: the transport's own buffer only shrinks once the kernel's send
buffer (up to 4 MiB on Linux) has room for a good part of it again.
"""

from __future__ import annotations

import array
import contextlib
import fcntl
import logging
import socket
import struct
import termios
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio

log = logging.getLogger("ds_server")


class StallWatch:
    """Aborts ``transport`` when, paused, it sends nothing for ``seconds``."""

    __slots__ = ("_backlog", "_loop", "_seconds", "_timer", "_transport")

    def __init__(
        self, loop: asyncio.AbstractEventLoop, transport: asyncio.Transport, seconds: float
    ) -> None:
        self._loop = loop
        self._transport = transport
        self._seconds = seconds
        self._timer: asyncio.TimerHandle | None = None
        self._backlog = 0

    def paused(self) -> None:
        """Writing paused: the client has this long to take some of what waits."""
        if self._timer is None:
            self._backlog = self._unsent()
            self._timer = self._loop.call_later(self._seconds, self._check)

    def resumed(self) -> None:
        """Writing resumed (or the connection is gone): stop watching."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _check(self) -> None:
        self._timer = None
        if self._transport.is_closing():
            return
        backlog = self._unsent()
        if backlog < self._backlog:
            # Slow, but reading: the client took some of it since the last look.
            self._backlog = backlog
            self._timer = self._loop.call_later(self._seconds, self._check)
            return
        log.debug("resetting a connection whose client took nothing for %.0f s", self._seconds)
        _reset(self._transport)

    def _unsent(self) -> int:
        """Bytes written but not yet acknowledged by the client: ours, and the kernel's."""
        return self._transport.get_write_buffer_size() + _kernel_unacknowledged(self._transport)


def _reset(transport: asyncio.Transport) -> None:
    """Close with a TCP reset: drop what waits to be sent, in the kernel too.

    A plain close (even the transport's abort) leaves the unsent bytes in the
    kernel, queued ahead of the FIN, for as long as the peer keeps its window
    shut; a proxy in front that stopped reading never even learns of it.
    """
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


def _kernel_unacknowledged(transport: asyncio.Transport) -> int:
    """Bytes in the socket's send queue the peer hasn't acknowledged (0 where unknown)."""
    sock = transport.get_extra_info("socket")
    if sock is None:
        return 0
    out = array.array("i", [0])
    try:
        fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, out)  # SIOCOUTQ for sockets
    except OSError:
        return 0
    return out[0]

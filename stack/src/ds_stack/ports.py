"""Loopback ports: a free one, and who holds a taken one.

So a launcher is never fooled by a process it didn't start.

A launcher checks that each port is free before it starts anything, and
that the process answering its readiness probe is the one it started (the
child, or one of its descendants, owns the listening socket). Ownership is
read from Linux's ``/proc`` (``net/tcp*`` for the socket, ``<pid>/fd`` for
who holds it); where ``/proc`` is missing it is reported as unknown and only
the free-port check applies.
"""

from __future__ import annotations

import contextlib
import os
import socket
from pathlib import Path
from typing import TYPE_CHECKING

from ds_settings import defaults

if TYPE_CHECKING:
    from collections.abc import Iterable

LOOPBACK = defaults.LOOPBACK
_PROC = Path("/proc")
_LISTEN = "0A"  # TCP_LISTEN in /proc/net/tcp's "st" column
_COMMAND_CHARS = 120


class PortInUse(RuntimeError):
    """A port a launcher needs is taken; the message names it and, if known, its holder."""

    def __init__(self, port: int, holder: str | None) -> None:
        by = f" by {holder}" if holder else ""
        super().__init__(f"port {port} is already in use{by}")
        self.port = port
        self.holder = holder


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now (another process may take it later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        port: int = sock.getsockname()[1]
        return port


def is_free(port: int, host: str = LOOPBACK) -> bool:
    """Whether a server could listen on ``host:port`` now (bound as servers bind it)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def require_free(ports: Iterable[int], host: str = LOOPBACK) -> None:
    """Raise PortInUse for the first of ``ports`` that is taken."""
    for port in ports:
        if not is_free(port, host):
            raise PortInUse(port, describe_holders(port))


def listening_inodes(port: int) -> set[int]:
    """Inodes of the sockets listening on TCP ``port`` (IPv4 and IPv6)."""
    inodes = set()
    for table in ("tcp", "tcp6"):
        with contextlib.suppress(OSError):
            for line in (_PROC / "net" / table).read_text().splitlines()[1:]:
                fields = line.split()
                local_port = int(fields[1].rsplit(":", 1)[1], 16)
                if local_port == port and fields[3] == _LISTEN:
                    inodes.add(int(fields[9]))
    return inodes


def holders(port: int) -> list[int]:
    """Pids of the processes holding a socket that listens on ``port`` (those we may see)."""
    inodes = listening_inodes(port)
    if not inodes:
        return []
    pids = (int(entry.name) for entry in _PROC.iterdir() if entry.name.isdigit())
    return sorted(pid for pid in pids if _holds_any(pid, inodes))


def describe_holders(port: int) -> str | None:
    """``pid 123 (envoy -c ...)`` for whoever listens on ``port``, or None if unknown."""
    found = holders(port)
    if not found:
        return None
    return ", ".join(f"pid {pid} ({command_line(pid)})" for pid in found)


def command_line(pid: int) -> str:
    """The process's command line, shortened; ``?`` if it is gone or hidden."""
    try:
        raw = (_PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return "?"
    text = raw.rstrip(b"\0").replace(b"\0", b" ").decode(errors="replace")
    return text if len(text) <= _COMMAND_CHARS else text[: _COMMAND_CHARS - 3] + "..."


def listened_by(port: int, pid: int) -> bool | None:
    """Whether ``pid`` or a descendant holds a socket listening on ``port``; None if unknown."""
    if not (_PROC / "net" / "tcp").exists():
        return None
    inodes = listening_inodes(port)
    return any(_holds_any(member, inodes) for member in _family(pid))


def _family(pid: int) -> list[int]:
    """``pid`` and its descendants (a launcher's command may be a wrapper that forks)."""
    family, pending = [], [pid]
    while pending:
        current = pending.pop()
        family.append(current)
        with contextlib.suppress(OSError):
            for task in (_PROC / str(current) / "task").iterdir():
                with contextlib.suppress(OSError):
                    pending += [int(c) for c in (task / "children").read_text().split()]
    return family


def _holds_any(pid: int, inodes: set[int]) -> bool:
    if not inodes:
        return False
    targets = {f"socket:[{inode}]" for inode in inodes}
    fd_dir = _PROC / str(pid) / "fd"
    try:
        names = os.listdir(fd_dir)
    except OSError:  # gone, or not ours to look at
        return False
    for name in names:
        with contextlib.suppress(OSError):
            if os.readlink(fd_dir / name) in targets:
                return True
    return False

"""What to launch: a command, its environment and log, and how to tell it is ready."""

from __future__ import annotations

import signal
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

    from ds_stack.launcher.log_pump import LogRotation


@dataclass(frozen=True, slots=True)
class ProcessSpec:
    """One child process.

    Readiness is ``ready_url`` answering 200, ``ready`` returning true, or
    ``ready_log`` appearing in what this start of the child wrote to
    ``log_path``; with none of them, the process having started. Once ready, the child (or a
    descendant) must own ``serves_port`` (default: ``ready_url``'s port), so
    a stranger on the port is never taken for it. ``ports`` must all be free
    before it starts (default: ``serves_port``).
    """

    name: str
    argv: tuple[str, ...]
    # None: this process's environment.
    env: Mapping[str, str] | None = None
    ready_url: str | None = None
    ready: Callable[[], bool] | None = None
    ready_log: str | None = None
    serves_port: int | None = None
    ports: tuple[int, ...] | None = None
    # Output (stdout and stderr) is appended here; None: inherited.
    log_path: Path | None = None
    # Set: the launcher writes the output itself, starting a new file when full
    # (ds_stack.launcher.log_pump); None: the child writes ``log_path`` directly.
    log_rotation: LogRotation | None = None
    cwd: Path | None = None
    # How a stop asks it to exit; SIGKILL follows after stop_timeout_secs.
    stop_signal: signal.Signals = signal.SIGTERM
    stop_timeout_secs: float = 10.0
    # Only against a hang: a child that dies is noticed at once, and start-up
    # on a loaded machine can take many times its usual second.
    ready_timeout_secs: float = 60.0
    poll_secs: float = 0.05
    # Its own session: a Ctrl-C meant for the launcher reaches it only
    # through the launcher, which stops the children in order.
    new_session: bool = True
    # Linux: the child gets ``stop_signal`` if the launching thread dies, so a
    # launcher killed with SIGKILL leaves no children behind (main thread only).
    die_with_parent: bool = True
    # Run as this user/group, with no supplementary groups.
    user: int | None = None
    group: int | None = None
    # Files the child owns (a rendered config), removed when it stops.
    owned_files: tuple[Path, ...] = field(default=())

    @property
    def port_served(self) -> int | None:
        """The port the child must listen on once ready, if any."""
        if self.serves_port is not None:
            return self.serves_port
        return None if self.ready_url is None else port_of(self.ready_url)

    @property
    def ports_required_free(self) -> tuple[int, ...]:
        """The ports checked before starting."""
        if self.ports is not None:
            return self.ports
        served = self.port_served
        return () if served is None else (served,)


def port_of(url: str) -> int:
    """The explicit port of ``url``."""
    port = urlsplit(url).port
    if port is None:
        raise ValueError(f"{url} names no port")
    return port

"""A real ds-server process on a free loopback port, for tests that need a socket.

A thin adapter over the one launcher (``ds_stack.launcher``): the many tests
that use ``ServerProcess`` keep their names; starting, readiness, port
checks and stopping are the launcher's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ds_stack import components
from ds_stack.launcher import Process, Service
from ds_stack.ports import free_port

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["ServerProcess", "free_port", "run_to_exit", "server_env"]

# Only against a hang: a server that should refuse to start is killed after this.
_EXIT_TIMEOUT_SECS = 60.0


def server_env(env: dict[str, str]) -> dict[str, str]:
    """The test process's environment without its ``DS_*`` settings, plus ``env``.

    ``/metrics`` gets a free port (tests run servers side by side) unless ``env`` says.
    """
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("DS_")}
    return {**inherited, "DS_METRICS__PORT": "0", **env}


def run_to_exit(
    env: dict[str, str], *args: str, wrapper: Sequence[str] = ()
) -> subprocess.CompletedProcess[str]:
    """Run a ``ds-server`` that should stop by itself (under ``wrapper``, a command prefix)."""
    return subprocess.run(
        [*wrapper, sys.executable, "-m", "ds_server", "--log-level", "warning", *args],
        env=server_env(env),
        capture_output=True,
        text=True,
        timeout=_EXIT_TIMEOUT_SECS,
    )


class ServerProcess(Service):
    """Start ``ds-server`` with extra environment; stop it on exit (SIGTERM, then SIGKILL)."""

    def __init__(self, env: dict[str, str] | None = None, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"ds-server-{self.port}.log"
        self._process = Process(
            components.ds_server(
                self.port,
                # Memory unless a test asks for a backend: the default (sqlite)
                # would write into the working directory.
                env={"DS_STORAGE__MODE": "memory", **(env or {})},
                log_path=self.log_path,
            )
        )

    @property
    def pid(self) -> int:
        pid = self._process.pid
        if pid is None:
            raise RuntimeError("ds-server is not running")
        return pid

    @property
    def running(self) -> bool:
        """Whether the process is still alive."""
        return self._process.running

    def start(self) -> None:
        # The log of an earlier server on this port would confuse the log hint.
        self.log_path.unlink(missing_ok=True)
        self._process.start()

    def kill(self) -> None:
        """SIGKILL, as a crash would."""
        self._process.kill()

    def stop(self) -> None:
        self._process.stop()

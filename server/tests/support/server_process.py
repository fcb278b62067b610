"""A real ds-server process on a free loopback port, for tests that need a socket."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
from ds_proxy import ports

if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import TracebackType

# Only against a hang: a server that dies is noticed at once, and start-up on a
# loaded machine can take many times its usual second.
_READY_TIMEOUT_SECS = 60.0
# Only against a hang: a server that should refuse to start is killed after this.
_EXIT_TIMEOUT_SECS = 60.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def server_env(env: dict[str, str]) -> dict[str, str]:
    """The test process's environment without its ``DS_*`` settings, plus ``env``."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("DS_")}
    return {**inherited, **env}


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


class ServerProcess:
    """Start ``ds-server`` with extra environment; stop it on exit (SIGTERM, then SIGKILL)."""

    def __init__(self, env: dict[str, str] | None = None, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._env = env or {}
        self._process: subprocess.Popen[bytes] | None = None
        self.log_path: Path | None = None

    @property
    def pid(self) -> int:
        if self._process is None:
            raise RuntimeError("ds-server is not running")
        return self._process.pid

    def start(self) -> None:
        # A stranger on the port would answer the readiness probe for us.
        ports.require_free([self.port])
        # Memory unless a test asks for a backend: the default (sqlite) would write
        # into the working directory.
        env = {**os.environ, "DS_STORAGE__MODE": "memory", **self._env}
        env["DS_SERVER__HOST"] = "127.0.0.1"
        env["DS_SERVER__PORT"] = str(self.port)
        log = Path(os.environ.get("TMPDIR", "/tmp")) / f"ds-server-{self.port}.log"
        self.log_path = log
        # The child keeps its own descriptor of the log; ours is closed at once.
        with log.open("wb") as log_file:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "ds_server", "--log-level", "warning"],
                env=env,
                stdout=log_file,
                stderr=subprocess.STDOUT,
            )
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + _READY_TIMEOUT_SECS
        while time.monotonic() < deadline:
            assert self._process is not None
            if self._process.poll() is not None:
                raise RuntimeError(f"ds-server exited early; see {self.log_path}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1.0).status_code == 200:
                    self._require_answered_by_child()
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"ds-server not ready after {_READY_TIMEOUT_SECS}s")

    def _require_answered_by_child(self) -> None:
        assert self._process is not None
        owned = ports.listened_by(self.port, self._process.pid)  # None: no /proc to ask
        if self._process.poll() is None and owned is not False:
            return
        holder = ports.describe_holders(self.port) or "another process"
        self.stop()
        raise RuntimeError(f"port {self.port} answered from {holder}, not the ds-server started")

    def kill(self) -> None:
        """SIGKILL, as a crash would."""
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None

    def stop(self) -> None:
        if self._process is None:
            return
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._process = None

    def __enter__(self) -> ServerProcess:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

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

if TYPE_CHECKING:
    from types import TracebackType

_READY_TIMEOUT_SECS = 20.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class ServerProcess:
    """Start ``ds-server`` with extra environment; stop it on exit (SIGTERM, then SIGKILL)."""

    def __init__(self, env: dict[str, str] | None = None, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._env = env or {}
        self._process: subprocess.Popen[bytes] | None = None
        self.log_path: Path | None = None

    def start(self) -> None:
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
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"ds-server not ready after {_READY_TIMEOUT_SECS}s")

    @property
    def pid(self) -> int:
        assert self._process is not None, "the server is not running"
        return self._process.pid

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

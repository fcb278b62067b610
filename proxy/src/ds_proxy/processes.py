"""Running Envoy and ds-server as child processes on loopback ports.

Used by ``make dev`` (ds_proxy.dev) and by the test suite: start, poll for
readiness, and always stop what was started (SIGTERM, then SIGKILL).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO, TYPE_CHECKING, Self

from ds_proxy import envoy_config as ec
from ds_proxy.paths import envoy_binary

if TYPE_CHECKING:
    from types import TracebackType

_READY_TIMEOUT_SECS = 30.0
_STOP_TIMEOUT_SECS = 10.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1.0) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


class ChildProcess:
    """A child process that is ready once ``ready_url`` answers 200."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], ready_url: str) -> None:
        self.name = name
        self.argv = argv
        self.env = env
        self.ready_url = ready_url
        self.log_path: Path | None = None
        # Files this process owns (its rendered config), removed on stop.
        self.owned_files: list[Path] = []
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    def start(self, log_path: Path | None = None) -> None:
        """Start and wait until ready; output goes to ``log_path`` (default: inherited)."""
        if log_path is not None:
            self.log_path = log_path
            self._log = log_path.open("wb")
        self._process = subprocess.Popen(
            self.argv,
            env=self.env,
            stdout=self._log,
            stderr=subprocess.STDOUT if self._log else None,
        )
        deadline = time.monotonic() + _READY_TIMEOUT_SECS
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                self.stop()
                raise RuntimeError(f"{self.name} exited early{self._log_hint()}")
            if _http_ok(self.ready_url):
                return
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(
            f"{self.name} not ready after {_READY_TIMEOUT_SECS:g}s{self._log_hint()}"
        )

    def _log_hint(self) -> str:
        return f"; see {self.log_path}" if self.log_path else ""

    def poll(self) -> int | None:
        """The exit code, or None while running."""
        return None if self._process is None else self._process.poll()

    @property
    def pid(self) -> int | None:
        """The running process's id (None when it isn't running)."""
        return None if self._process is None else self._process.pid

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it does not exit in time."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=_STOP_TIMEOUT_SECS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None
        for path in self.owned_files:
            path.unlink(missing_ok=True)
        self.owned_files.clear()

    def __enter__(self) -> Self:
        if self._process is None:
            self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def ds_server(
    port: int, env: dict[str, str] | None = None, argv: list[str] | None = None
) -> ChildProcess:
    """ds-server on 127.0.0.1:``port`` with gateway authorization on (``env`` adds/overrides)."""
    child_env = {
        **os.environ,
        "DS_AUTH__MODE": "gateway",
        **(env or {}),
        # Only the gateway may be reachable: loopback, whatever the caller's environment says.
        "DS_SERVER__HOST": "127.0.0.1",
        "DS_SERVER__PORT": str(port),
    }
    command = argv or [sys.executable, "-m", "ds_server", "--log-level", "warning"]
    return ChildProcess("ds-server", command, child_env, f"http://127.0.0.1:{port}/healthz")


def envoy(
    config: ec.Config, *, admin_port: int, concurrency: int = 2, log_level: str = "warn"
) -> ChildProcess:
    """Envoy running ``config`` (written to a temporary file); ready when admin /ready is 200."""
    handle, name = tempfile.mkstemp(prefix="ds-envoy-", suffix=".yaml")
    os.close(handle)
    path = ec.write(config, Path(name))
    argv = [
        envoy_binary(),
        "-c",
        str(path),
        # No shared memory: several Envoys (parallel tests, a dev stack) never clash.
        "--disable-hot-restart",
        "--concurrency",
        str(concurrency),
        "--log-level",
        log_level,
    ]
    child = ChildProcess("envoy", argv, dict(os.environ), f"http://127.0.0.1:{admin_port}/ready")
    child.owned_files.append(path)
    return child

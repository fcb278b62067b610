"""Running Envoy and ds-server as child processes on loopback ports.

Used by ``make dev`` (ds_proxy.dev) and by the test suite: check that the
ports are free, start, poll for readiness (answered by the process started,
not a stranger on its port), and always stop what was started (SIGTERM,
then SIGKILL).
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
from urllib.parse import urlsplit

from ds_proxy import envoy_config as ec
from ds_proxy import ports as port_owners
from ds_proxy.paths import envoy_binary

if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import TracebackType

# Only against a hang: a child that dies is noticed at once, and start-up on a
# loaded machine can take many times its usual second.
_READY_TIMEOUT_SECS = 60.0
_STOP_TIMEOUT_SECS = 10.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _port_of(url: str) -> int:
    port = urlsplit(url).port
    if port is None:
        raise ValueError(f"{url} names no port")
    return port


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1.0) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


class LaunchError(RuntimeError):
    """A child process did not start, or something else answered in its place."""


class ChildProcess:
    """A child process that is ready once ``ready_url`` answers 200 from its own socket.

    ``ports`` must be free before it starts (by default, the port of ``ready_url``).
    """

    def __init__(
        self,
        name: str,
        argv: list[str],
        env: dict[str, str],
        ready_url: str,
        ports: Sequence[int] | None = None,
    ) -> None:
        self.name = name
        self.argv = argv
        self.env = env
        self.ready_url = ready_url
        self.ready_port = _port_of(ready_url)
        self.ports = tuple(ports) if ports is not None else (self.ready_port,)
        self.log_path: Path | None = None
        # Files this process owns (its rendered config), removed on stop.
        self.owned_files: list[Path] = []
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def pid(self) -> int | None:
        """The child's pid while it runs."""
        return None if self._process is None else self._process.pid

    def start(self, log_path: Path | None = None) -> None:
        """Start and wait until ready; output goes to ``log_path`` (default: inherited).

        Raises ``ports.PortInUse`` before starting anything if one of ``ports``
        is taken, and LaunchError if the child exits, is not ready in time, or
        another process answers its readiness probe.
        """
        port_owners.require_free(self.ports)
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
            status = self._process.poll()
            if status is not None:
                self.stop()
                raise LaunchError(f"{self.name} exited early (status {status}){self._log_hint()}")
            if _http_ok(self.ready_url):
                self._require_answered_by_child()
                return
            time.sleep(0.05)
        self.stop()
        raise LaunchError(f"{self.name} not ready after {_READY_TIMEOUT_SECS:g}s{self._log_hint()}")

    def _require_answered_by_child(self) -> None:
        # A 200 proves only that *something* answers on the port: perhaps a
        # stranger that took it after the free-port check.
        assert self._process is not None
        pid = self._process.pid
        owned = port_owners.listened_by(self.ready_port, pid)
        # Without /proc (owned is None), the live child and the free-port check must do.
        if self._process.poll() is None and owned is not False:
            return
        holder = port_owners.describe_holders(self.ready_port) or "another process"
        self.stop()
        raise LaunchError(
            f"port {self.ready_port} answered for {self.name}, but from {holder}, "
            f"not from the {self.name} just started (pid {pid}){self._log_hint()}"
        )

    def _log_hint(self) -> str:
        return f"; see {self.log_path}" if self.log_path else ""

    def poll(self) -> int | None:
        """The exit code, or None while running."""
        return None if self._process is None else self._process.poll()

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
        # Access log lines appear within a quarter second, not Envoy's default ten.
        "--file-flush-interval-msec",
        "250",
    ]
    listen_port = int(ec.listener(config)["address"]["socket_address"]["port_value"])
    child = ChildProcess(
        "envoy",
        argv,
        dict(os.environ),
        f"http://127.0.0.1:{admin_port}/ready",
        ports=(listen_port, admin_port),
    )
    child.owned_files.append(path)
    return child

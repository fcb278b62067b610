"""Launching a server under test (ds-server or the Node reference) and stopping it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import psutil

if TYPE_CHECKING:
    from types import TracebackType

NODE_DIR = Path(__file__).resolve().parents[2] / "node"
_READY_SECS = 120.0


def free_port() -> int:
    """A loopback TCP port that is free right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class ServerProcess:
    """A server in a child process on a free loopback port; a context manager."""

    label = "server"

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None
        self.ready_secs = 0.0

    def command(self) -> list[str]:
        raise NotImplementedError

    def environment(self) -> dict[str, str]:
        return dict(os.environ)

    def is_ready(self) -> bool:
        """One readiness probe; raises ``httpx.TransportError`` while not listening."""
        raise NotImplementedError

    @property
    def pid(self) -> int:
        if self.process is None:
            raise RuntimeError(f"{self.label} is not running")
        return self.process.pid

    def rss_bytes(self) -> int:
        """Resident set size of the server process now."""
        return int(psutil.Process(self.pid).memory_info().rss)

    def cpu_seconds(self) -> float:
        """User + system CPU time the server process (all its threads) has used so far."""
        times = psutil.Process(self.pid).cpu_times()
        return float(times.user + times.system)

    def start(self) -> None:
        started = time.perf_counter()
        self.process = subprocess.Popen(
            self.command(),
            env=self.environment(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = started + _READY_SECS
        while time.perf_counter() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.label} exited during start-up")
            try:
                if self.is_ready():
                    self.ready_secs = time.perf_counter() - started
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.01)
        self.stop()
        raise RuntimeError(f"{self.label} not ready in {_READY_SECS:.0f} s")

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

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


class DsServer(ServerProcess):
    """``python -m ds_server`` with the given storage mode and data directory."""

    def __init__(
        self,
        mode: str,
        data_dir: Path,
        extra_env: dict[str, str] | None = None,
        *,
        label: str = "ds-server",
    ) -> None:
        super().__init__()
        self.mode = mode
        self.label = f"{label} ({mode})"
        self.data_dir = data_dir
        self.extra_env = extra_env or {}

    def command(self) -> list[str]:
        return [sys.executable, "-m", "ds_server", "--log-level", "warning"]

    def environment(self) -> dict[str, str]:
        return {
            **os.environ,
            "DS_SERVER__HOST": "127.0.0.1",
            "DS_SERVER__PORT": str(self.port),
            "DS_STORAGE__MODE": self.mode,
            "DS_STORAGE__DATA_DIR": str(self.data_dir),
            # Benchmarks measure the server, not its limits: room for 256 MiB
            # streams and batched bodies of many 1 MiB messages.
            "DS_LIMITS__MAX_MEMORY_BYTES": str(8 * 1024**3),
            "DS_LIMITS__MAX_STREAM_BYTES": str(4 * 1024**3),
            **self.extra_env,
        }

    def is_ready(self) -> bool:
        return httpx.get(f"{self.url}/healthz", timeout=0.5).status_code == 200

    def __enter__(self) -> DsServer:
        self.start()
        return self


class NodeServer(ServerProcess):
    """The official Node reference server (``bench/node/server.mjs``).

    Memory mode without ``data_dir``; file mode (log files + LMDB, fsync per
    append) with it.
    """

    def __init__(self, data_dir: Path | None = None) -> None:
        super().__init__()
        self.data_dir = data_dir
        self.mode = "memory" if data_dir is None else "file"
        self.label = f"node ({self.mode})"

    def command(self) -> list[str]:
        argv = ["node", str(NODE_DIR / "server.mjs"), "--port", str(self.port)]
        if self.data_dir is not None:
            argv += ["--data-dir", str(self.data_dir)]
        return argv

    def is_ready(self) -> bool:
        # The reference serves no health route: any HTTP answer means it listens.
        httpx.head(f"{self.url}/v1/stream/ds-bench-ready-probe", timeout=0.5)
        return True

    def __enter__(self) -> NodeServer:
        self.start()
        return self

"""Launching a ds-server process for a benchmark run and stopping it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import httpx

if TYPE_CHECKING:
    from pathlib import Path
    from types import TracebackType


def free_port() -> int:
    """A loopback TCP port that is free right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class DsServer:
    """``python -m ds_server`` with the given storage mode and data directory."""

    def __init__(self, mode: str, data_dir: Path, extra_env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.mode = mode
        self.data_dir = data_dir
        self.extra_env = extra_env or {}
        self.process: subprocess.Popen[bytes] | None = None
        self.ready_secs = 0.0

    def start(self) -> None:
        env = {
            **os.environ,
            "DS_SERVER__HOST": "127.0.0.1",
            "DS_SERVER__PORT": str(self.port),
            "DS_STORAGE__MODE": self.mode,
            "DS_STORAGE__DATA_DIR": str(self.data_dir),
            # Benchmarks measure the server, not its limits.
            "DS_LIMITS__MAX_MEMORY_BYTES": str(8 * 1024**3),
            "DS_LIMITS__MAX_STREAM_BYTES": str(4 * 1024**3),
            **self.extra_env,
        }
        started = time.perf_counter()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ds_server", "--log-level", "warning"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = started + 120
        while time.perf_counter() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"ds-server ({self.mode}) exited during start-up")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=0.5).status_code == 200:
                    self.ready_secs = time.perf_counter() - started
                    return
            except httpx.TransportError:
                time.sleep(0.01)
        raise RuntimeError(f"ds-server ({self.mode}) not ready in 120 s")

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

    def __enter__(self) -> DsServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

"""Launching a server under test (ds-server or the Node reference) and stopping it.

The launching itself is the one launcher's (``ds_stack.launcher``): port
checks, readiness from the child's own socket, SIGTERM then SIGKILL.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import psutil
from ds_stack.launcher import LaunchError, Process, ProcessSpec, Service
from ds_stack.ports import free_port

from ds_bench.configurations import COMPILED_DIR

if TYPE_CHECKING:
    from ds_bench.configurations import Configuration

__all__ = ["NODE_DIR", "DsServer", "NodeServer", "ServerProcess", "free_port"]

NODE_DIR = Path(__file__).resolve().parents[2] / "node"
_READY_SECS = 120.0


class ServerProcess(Service):
    """A server in a child process on a free loopback port; a context manager."""

    label = "server"
    # Where its output goes: nowhere, unless a subclass keeps it.
    log_path = Path(os.devnull)
    # A token requests must carry (behind the gateway), else None.
    token: str | None = None

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: Process | None = None
        self.ready_secs = 0.0

    def command(self) -> list[str]:
        raise NotImplementedError

    def environment(self) -> dict[str, str]:
        return dict(os.environ)

    def is_ready(self) -> bool:
        """One readiness probe; raises ``httpx.TransportError`` while not listening."""
        raise NotImplementedError

    def _probe(self) -> bool:
        try:
            return self.is_ready()
        except httpx.TransportError:
            return False

    @property
    def pid(self) -> int:
        pid = None if self.process is None else self.process.pid
        if pid is None:
            raise RuntimeError(f"{self.label} is not running")
        return pid

    def rss_bytes(self) -> int:
        """Resident set size of the server process now."""
        return int(psutil.Process(self.pid).memory_info().rss)

    def cpu_seconds(self) -> float:
        """User + system CPU time the server process (all its threads) has used so far."""
        times = psutil.Process(self.pid).cpu_times()
        return float(times.user + times.system)

    def wakeups(self) -> int:
        """How often the process has slept and been woken so far (voluntary context switches)."""
        return int(psutil.Process(self.pid).num_ctx_switches().voluntary)

    def start(self) -> None:
        self.process = Process(
            ProcessSpec(
                name=self.label,
                argv=tuple(self.command()),
                env=self.environment(),
                ready=self._probe,
                serves_port=self.port,
                # Its output would interleave with the run's tables.
                log_path=self.log_path,
                poll_secs=0.01,
                ready_timeout_secs=_READY_SECS,
                stop_timeout_secs=30.0,
            )
        )
        try:
            self.process.start()
        except LaunchError as exc:
            raise RuntimeError(str(exc)) from None
        self.ready_secs = self.process.ready_secs or 0.0

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None


class DsServer(ServerProcess):
    """``python -m ds_server`` with the given storage mode and data directory."""

    def __init__(
        self,
        mode: str,
        data_dir: Path,
        extra_env: dict[str, str] | None = None,
        *,
        label: str = "ds-server",
        configuration: Configuration | None = None,
        compiled_dir: Path = COMPILED_DIR,
    ) -> None:
        super().__init__()
        self.mode = mode
        self.label = f"{label} ({mode})"
        self.data_dir = data_dir
        self.extra_env = extra_env or {}
        # None: the build on this process's path, request log off (benchmarks of
        # the stores and ds-sync, which measure other things).
        self.configuration = configuration
        self.compiled_dir = compiled_dir
        if configuration is not None:
            self.label = f"{label} ({configuration.name}, {mode})"
            # Its log goes to a file, as a deployment's does; kept till the server stops.
            self.log_path = data_dir / "ds-server.log"

    def command(self) -> list[str]:
        if self.configuration is not None:
            return [sys.executable, "-m", "ds_server", *self.configuration.argv]
        return [sys.executable, "-m", "ds_server", "--log-level", "warning"]

    def environment(self) -> dict[str, str]:
        config = self.configuration
        base = dict(os.environ) if config is None else config.server_env(self.compiled_dir)
        return {
            **base,
            "DS_SERVER__HOST": "127.0.0.1",
            "DS_SERVER__PORT": str(self.port),
            "DS_STORAGE__MODE": self.mode,
            "DS_STORAGE__DATA_DIR": str(self.data_dir),
            # Benchmarks measure the server, not its limits: room for 256 MiB
            # streams and batched bodies of many 1 MiB messages.
            "DS_LIMITS__MAX_MEMORY_BYTES": str(8 * 1024**3),
            "DS_LIMITS__MAX_STREAM_BYTES": str(4 * 1024**3),
            # Metrics on, as deployed; their listener on any free port.
            "DS_METRICS__PORT": "0",
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

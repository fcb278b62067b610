"""Envoy, with the committed development config, in front of a server under test.

The config is ``proxy/envoy/envoy.yaml`` as committed, JWT checks
included; only its ports change, and the per-subject rate limits are lifted
unless ``limits`` says otherwise (a benchmark's one token would meet them).
Either server sits behind it unchanged: ds-server with authorization off
(the default) and the Node reference both ignore the identity headers
Envoy adds.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import psutil
from ds_proxy.tokens import bucket_token
from ds_stack import components
from ds_stack.launcher import Process, Service
from ds_stack.ports import free_port

from ds_bench.servers import ServerProcess

if TYPE_CHECKING:
    from collections.abc import Mapping

# DS_PROXY__* (ds_proxy.limits): no rate limit per subject.
UNLIMITED = {"DS_PROXY__APPENDS_PER_SEC": "0", "DS_PROXY__READS_PER_SEC": "0"}


class Gateway(Service):
    """Envoy on a free loopback port, forwarding to ``upstream_port``; a context manager."""

    def __init__(self, upstream_port: int, limits: Mapping[str, str] = UNLIMITED) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._logs = tempfile.TemporaryDirectory(prefix="ds-bench-envoy-")
        logs = Path(self._logs.name)
        # Its access log (a line per request) goes to a file, not the run's output.
        self._envoy = Process(
            components.gateway(
                listen_port=self.port,
                upstream_ports=[upstream_port],
                admin_port=free_port(),
                config_path=logs / "envoy.yaml",
                log_path=logs / "envoy.log",
                env=limits,
            )
        )

    @staticmethod
    def token() -> str:
        """A token Envoy accepts (the committed test key), for every bucket."""
        return bucket_token("ds-bench", read=("*",), write=("*",))

    @property
    def pid(self) -> int:
        pid = self._envoy.pid
        if pid is None:
            raise RuntimeError("envoy is not running")
        return pid

    def rss_bytes(self) -> int:
        """Envoy's resident set size now."""
        return int(psutil.Process(self.pid).memory_info().rss)

    def start(self) -> None:
        self._envoy.start()

    def stop(self) -> None:
        self._envoy.stop()
        self._logs.cleanup()


class BehindGateway(ServerProcess):
    """``server`` reached through a Gateway, with its token: the dev stack's way in.

    Requests go to Envoy (``url``, ``token``); the CPU and memory reported
    are the server's, Envoy's CPU is ``envoy_cpu_seconds``.
    """

    def __init__(self, server: ServerProcess) -> None:
        self.server = server
        self.label = f"{server.label} via Envoy"
        self.token = Gateway.token()
        self.gateway: Gateway | None = None
        self.port = 0
        self.url = ""
        self.ready_secs = 0.0

    @property
    def pid(self) -> int:
        return self.server.pid

    def envoy_cpu_seconds(self) -> float:
        """User + system CPU time Envoy has used so far."""
        if self.gateway is None:
            raise RuntimeError("envoy is not running")
        times = psutil.Process(self.gateway.pid).cpu_times()
        return float(times.user + times.system)

    def start(self) -> None:
        self.server.start()
        try:
            self.gateway = Gateway(self.server.port).__enter__()
        except BaseException:
            self.server.stop()
            raise
        self.port, self.url = self.gateway.port, self.gateway.url
        self.ready_secs = self.server.ready_secs

    def stop(self) -> None:
        if self.gateway is not None:
            self.gateway.__exit__(None, None, None)
            self.gateway = None
        self.server.stop()

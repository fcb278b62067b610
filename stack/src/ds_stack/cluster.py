"""ds-server replicas on one Postgres store behind Envoy, for tests and the conformance run.

``make dev-cluster`` is the whole stack with replicas (``ds_stack.dev``);
this is the bare cluster: Postgres (embedded, or a database the caller
gives), N replicas in gateway mode, Envoy balancing them with health
checks, and a token for every bucket. Replicas can be killed and restarted
one by one while the others serve.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from ds_settings.defaults import DATABASE, STORE_SCHEMA

from ds_stack import components
from ds_stack.dev.tokens import PendingTokens, TokenRequest
from ds_stack.launcher import Process, Service
from ds_stack.ports import LOOPBACK, free_port
from ds_stack.postgres import EmbeddedPostgres, PostgresConfig

if TYPE_CHECKING:
    from collections.abc import Mapping


class Cluster(Service):
    """Start, kill, restart and stop the replicas of one shared store behind Envoy."""

    def __init__(
        self,
        *,
        replicas: int = 2,
        balance: str = "MAGLEV",
        postgres_url: str | None = None,
        server_env: Mapping[str, str] | None = None,
        workdir: Path | None = None,
        token_ttl_secs: int = 24 * 3600,
    ) -> None:
        self._tmp = None if workdir else tempfile.TemporaryDirectory(prefix="ds-cluster-")
        self.workdir = workdir or Path(self._tmp.name if self._tmp else ".")
        self.workdir.mkdir(parents=True, exist_ok=True)
        # Its own directory: the server may run as another user, who can't enter workdir.
        self._postgres_dir = (
            None if postgres_url else Path(tempfile.mkdtemp(prefix="ds-cluster-pg-"))
        )
        self._own_postgres = (
            None
            if self._postgres_dir is None
            else EmbeddedPostgres(PostgresConfig(data_dir=self._postgres_dir, durable=False))
        )
        self._postgres_url = postgres_url
        self.ports = [free_port() for _ in range(replicas)]
        self.gateway_port = free_port()
        self.admin_port = free_port()
        self._server_env = dict(server_env or {})
        self._balance = balance
        self._token_ttl_secs = token_ttl_secs
        self.replicas: list[Process] = []
        self.gateway: Process | None = None
        self.token = ""

    @property
    def url(self) -> str:
        """The gateway: the one way in."""
        return f"http://{LOOPBACK}:{self.gateway_port}"

    @property
    def postgres_url(self) -> str:
        assert self._postgres_url is not None, "start() first"
        return self._postgres_url

    def replica_url(self, index: int) -> str:
        return f"http://{LOOPBACK}:{self.ports[index]}"

    def start(self) -> None:
        pending = PendingTokens({"all": TokenRequest("cluster", "*", "*", self._token_ttl_secs)})
        try:
            if self._own_postgres is not None:
                self._own_postgres.start()
                self._postgres_url = self._own_postgres.create_database(DATABASE)
            env = {
                "DS_AUTH__MODE": "gateway",
                "DS_STORAGE__MODE": "postgres",
                "DS_STORAGE__POSTGRES_URL": self.postgres_url,
                "DS_STORAGE__POSTGRES_SCHEMA": STORE_SCHEMA,
                **self._server_env,
            }
            self.replicas = [
                Process(
                    components.ds_server(
                        port,
                        env=env,
                        log_level="info",
                        log_path=self.workdir / f"ds-server-{i + 1}.log",
                        name=f"ds-server-{i + 1}",
                    )
                )
                for i, port in enumerate(self.ports)
            ]
            # The first creates the schema; the others then start side by side.
            self.replicas[0].start()
            for replica in self.replicas[1:]:
                replica.launch()
            for replica in self.replicas[1:]:
                replica.wait_ready()
            self.gateway = Process(
                components.gateway(
                    listen_port=self.gateway_port,
                    upstream_ports=self.ports,
                    admin_port=self.admin_port,
                    config_path=self.workdir / "envoy.yaml",
                    log_path=self.workdir / "envoy.log",
                    balance=self._balance,
                )
            )
            self.gateway.start()
            self.token = pending.result()["all"]
        except BaseException:
            pending.cancel()
            self.stop()
            raise

    def kill(self, index: int) -> None:
        """SIGKILL one replica, as a crash would."""
        self.replicas[index].kill()

    def restart(self, index: int) -> None:
        """Start a stopped or killed replica again on its port; wait until it serves."""
        self.replicas[index].restart()

    def stop(self) -> None:
        for process in [self.gateway, *self.replicas]:
            if process is not None:
                with contextlib.suppress(Exception):
                    process.stop()
        if self._own_postgres is not None:
            with contextlib.suppress(Exception):
                self._own_postgres.stop()
        if self._postgres_dir is not None:
            shutil.rmtree(self._postgres_dir, ignore_errors=True)
        if self._tmp is not None:
            self._tmp.cleanup()

"""The whole stack through the one launcher: what ``make dev`` runs and the e2e suite tests.

Postgres (embedded), ds-server on its durable default store, Envoy in front
of it, ds-sync in both directions through Envoy with a service token, and
the heartbeat producer. Components start as early as their dependencies
allow (ds-server and Envoy while Postgres initialises) and stop in the
reverse order.
"""

from __future__ import annotations

import contextlib
import dataclasses
import http.client
import ssl
import time
from typing import TYPE_CHECKING, Protocol

from ds_settings.defaults import DATABASE, STORE_SCHEMA

from ds_stack import components
from ds_stack.dev.tokens import PendingTokens, TokenRequest
from ds_stack.launcher import Process
from ds_stack.ports import LOOPBACK, require_free
from ds_stack.postgres import EmbeddedPostgres, PostgresConfig

if TYPE_CHECKING:
    from ds_stack.dev.config import StackConfig
    from ds_stack.launcher import ProcessSpec

# sessions.md §1: the default bucket of session streams (buckets are created explicitly).
SESSIONS_BUCKET = "sessions"
# The components in start order; stopped in reverse.
COMPONENTS = ("postgres", "ds-server", "envoy", "ds-sync", "heartbeat", "snapshots")


class Reporter(Protocol):
    """What the stack says as it starts (``make dev`` prints it; tests ignore it)."""

    def tokens(self, tokens: dict[str, str]) -> None: ...

    def ready(self, component: str, seconds: float) -> None: ...


class Silent:
    """A reporter that says nothing."""

    def tokens(self, tokens: dict[str, str]) -> None:
        pass

    def ready(self, component: str, seconds: float) -> None:
        pass


class Stack:
    """Start, watch and stop every component of the stack described by ``config``."""

    def __init__(self, config: StackConfig) -> None:
        self.config = config
        self.tokens: dict[str, str] = {}
        self.postgres = EmbeddedPostgres(
            PostgresConfig(
                data_dir=config.postgres_dir,
                port=config.postgres_port,
                durable=config.durable_postgres,
                log_rotation=config.log_rotation,
            )
        )
        logs = config.logs_dir
        self.servers = [
            self._process(
                components.ds_server(
                    port,
                    env={
                        **self._server_env(),
                        "DS_METRICS__PORT": str(config.server_metrics_ports[i]),
                        **config.server_env,
                    },
                    log_level="info",
                    log_path=logs
                    / (f"ds-server-{i + 1}.log" if config.clustered else "ds-server.log"),
                    name=f"ds-server-{i + 1}" if config.clustered else "ds-server",
                )
            )
            for i, port in enumerate(config.server_ports)
        ]
        self.gateway = self._process(
            components.gateway(
                listen_port=config.gateway_port,
                upstream_ports=config.server_ports,
                admin_port=config.admin_port,
                config_path=config.envoy_config,
                log_path=logs / "envoy.log",
                # The session viewer at /ui/ offers it (ds_proxy.dev_token).
                offer_dev_token=True,
                balance=config.balance,
                local_tls_dir=config.tls_dir if config.tls else None,
            )
        )
        # ds-sync and the heartbeat need tokens: their specs are made once minted.
        self.syncs: list[Process] = []
        self.heartbeat: Process | None = None
        self.snapshots: Process | None = None
        self.started_at = 0.0

    def start(self, reporter: Reporter | None = None) -> None:
        """Start every component and wait until each is ready; on failure stop what started.

        Raises ``ports.PortInUse`` before starting anything if any port is taken.
        """
        report = reporter or Silent()
        config = self.config
        require_free(config.ports().values())
        self.started_at = time.monotonic()
        config.logs_dir.mkdir(parents=True, exist_ok=True)
        pending = PendingTokens(self._token_requests())
        try:
            # ds-server, Envoy and the token mints start while Postgres does
            # (replicas after it: their store is in it).
            if not config.clustered:
                self.servers[0].launch()
            self.gateway.launch()
            self.postgres.start()
            self.postgres.create_database(DATABASE)
            if config.clustered:
                for server in self.servers:
                    server.launch()
            self.tokens = pending.result()
            report.tokens(self.tokens)
            report.ready("postgres", self._elapsed())
            for server in self.servers:
                server.wait_ready()
                report.ready(server.spec.name, self._elapsed())
            self.gateway.wait_ready()
            self._create_bucket(SESSIONS_BUCKET)
            report.ready("envoy", self._elapsed())
            # Several share the work: they start side by side and divide it as they come up.
            self.syncs = [self._process(self._sync_spec(i)) for i in range(config.syncs)]
            for sync in self.syncs:
                sync.launch()
            for sync in self.syncs:
                sync.wait_ready()
                report.ready(sync.spec.name, self._elapsed())
            self.heartbeat = self._process(self._heartbeat_spec())
            self.heartbeat.start()
            report.ready("heartbeat", self._elapsed())
            if config.snapshot_secs > 0:
                self.snapshots = self._process(self._snapshots_spec())
                self.snapshots.start()
                report.ready("snapshots", self._elapsed())
        except BaseException:
            pending.cancel()
            self.stop()
            raise

    def _server_env(self) -> dict[str, str]:
        config = self.config
        env = {
            # Bucket scopes from the identity Envoy forwards.
            "DS_AUTH__MODE": "gateway",
            "DS_STORAGE__DATA_DIR": str(config.streams_dir),
        }
        if config.clustered:
            env["DS_STORAGE__MODE"] = "postgres"
            env["DS_STORAGE__POSTGRES_URL"] = config.postgres_url
            env["DS_STORAGE__POSTGRES_SCHEMA"] = STORE_SCHEMA
        return env

    def _elapsed(self) -> float:
        return time.monotonic() - self.started_at

    def _create_bucket(self, bucket: str) -> None:
        """Create ``bucket`` through the gateway unless it exists (409)."""
        config = self.config
        connection: http.client.HTTPConnection
        if config.tls:
            trusted = ssl.create_default_context(cafile=config.tls_cert_file)
            connection = http.client.HTTPSConnection(
                LOOPBACK, config.gateway_port, timeout=10, context=trusted
            )
        else:
            connection = http.client.HTTPConnection(LOOPBACK, config.gateway_port, timeout=10)
        try:
            headers = {"Authorization": f"Bearer {self.tokens['user']}"}
            connection.request("PUT", f"/ds/{bucket}", headers=headers)
            response = connection.getresponse()
            status = response.status
            body = response.read().decode(errors="replace").strip()
        finally:
            connection.close()
        if status not in (201, 409):
            raise RuntimeError(f"creating the {bucket!r} bucket: {status} {body}")

    def _token_requests(self) -> dict[str, TokenRequest]:
        ttl = self.config.token_ttl_secs
        return {
            # For people: every bucket.
            "user": TokenRequest("dev", "*", "*", ttl),
            # Subscriptions and the __ds wake streams need "*".
            "sync": TokenRequest("ds-sync", "*", "*", ttl),
            "heartbeat": TokenRequest("heartbeat", "session-events", "session-events", ttl),
        }

    def _process(self, spec: ProcessSpec) -> Process:
        """A component, its log rotated by size (the stack runs for months)."""
        return Process(dataclasses.replace(spec, log_rotation=self.config.log_rotation))

    def _sync_spec(self, index: int) -> ProcessSpec:
        config = self.config
        name = f"ds-sync-{index + 1}" if config.syncs > 1 else "ds-sync"
        env = {**config.trust_env(), "DS_SYNC__INSTANCE": name, **config.sync_env}
        if config.electric_url:
            env["ELECTRIC_URL"] = config.electric_url
        return components.ds_sync(
            server_url=config.gateway_url,
            postgres_url=config.postgres_url,
            metrics_port=config.sync_ports[index],
            token=self.tokens["sync"],
            env=env,
            log_path=config.logs_dir / f"{name}.log",
            name=name,
        )

    def _heartbeat_spec(self) -> ProcessSpec:
        config = self.config
        return components.heartbeat(
            server_url=config.gateway_url,
            postgres_url=config.postgres_url,
            token=self.tokens["heartbeat"],
            interval_secs=config.heartbeat_secs,
            log_path=config.logs_dir / "heartbeat.log",
            env=config.trust_env(),
        )

    def _snapshots_spec(self) -> ProcessSpec:
        config = self.config
        return components.snapshot_schedule(
            server_url=config.gateway_url,
            postgres_url=config.postgres_url,
            token=self.tokens["sync"],
            every_secs=config.snapshot_secs,
            log_path=config.logs_dir / "snapshots.log",
            env=config.trust_env(),
        )

    def processes(self) -> dict[str, Process]:
        """The launched components other than Postgres, by name."""
        found = {server.spec.name: server for server in self.servers}
        found["envoy"] = self.gateway
        for sync in self.syncs:
            found[sync.spec.name] = sync
        if self.heartbeat is not None:
            found["heartbeat"] = self.heartbeat
        if self.snapshots is not None:
            found["snapshots"] = self.snapshots
        return found

    @property
    def server(self) -> Process:
        """ds-server (the first replica, on a cluster)."""
        return self.servers[0]

    @property
    def sync(self) -> Process | None:
        """ds-sync (the first process, when several share the work)."""
        return self.syncs[0] if self.syncs else None

    def carries_on_without(self, name: str) -> bool:
        """Whether ``name`` is one of several ds-server replicas or ds-sync processes: the
        others go on while it is started again."""
        replica = self.config.clustered and any(s.spec.name == name for s in self.servers)
        return replica or (len(self.syncs) > 1 and any(s.spec.name == name for s in self.syncs))

    def restart(self, name: str) -> None:
        """Start a component that exited again, and wait until it is ready."""
        self.processes()[name].restart()

    def exited(self) -> tuple[str, str] | None:
        """The first component that is no longer running, and how it ended; None if all run."""
        if not self.postgres.running:
            return "postgres", f"see {self.postgres.log_path}"
        for name, process in self.processes().items():
            status = process.poll()
            if status is not None:
                return name, f"status {status}{process.log_hint()}"
        return None

    def stop(self) -> None:
        """Stop every component, in reverse start order; never raises for one that won't."""
        for process in reversed(list(self.processes().values())):
            with contextlib.suppress(Exception):
                process.stop()
        with contextlib.suppress(Exception):
            self.postgres.stop()

"""The dev stack's ports, state directory and timings: ``make dev``'s defaults, or a test's."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

# The reference stack's port map.
from ds_settings import defaults
from ds_settings.defaults import (
    ADMIN_PORT,
    GATEWAY_PORT,
    POSTGRES_PORT,
    SERVER_METRICS_PORT,
    SERVER_PORT,
    SYNC_PORT,
)

from ds_stack.launcher import LogRotation
from ds_stack.ports import LOOPBACK, free_port

if TYPE_CHECKING:
    from collections.abc import Mapping

# Replica i of a cluster (`make dev-cluster`) listens on SERVER_PORT + i * this; ds-sync
# process i's /metrics on SYNC_PORT + i * this.
REPLICA_PORT_STEP = 10
# The session snapshot job's period: a Spark start (a JVM) an hour is cheap,
# and bounds session-events (about 100 kB an hour of heartbeats) by far.
SNAPSHOT_SECS = 3600.0
# Each component's log starts a new file past this size, and this many old
# ones are kept: a stack left running for months keeps at most
# (LOG_KEEP + 1) * LOG_MAX_MB per component, not a log of its whole life.
LOG_MAX_MB = 16
LOG_KEEP = 3


def log_rotation_of(max_mb: float = LOG_MAX_MB, keep: int = LOG_KEEP) -> LogRotation:
    """The component logs' rotation: a new file past ``max_mb`` MiB, ``keep`` old ones."""
    return LogRotation(max_bytes=max(1, round(max_mb * 1024 * 1024)), keep=keep)


@dataclass(frozen=True, slots=True)
class StackConfig:
    """Where the stack keeps its state and which loopback ports it uses."""

    state_dir: Path = Path(".dev")
    gateway_port: int = GATEWAY_PORT
    server_port: int = SERVER_PORT
    admin_port: int = ADMIN_PORT
    postgres_port: int = POSTGRES_PORT
    sync_port: int = SYNC_PORT
    server_metrics_port: int = SERVER_METRICS_PORT
    heartbeat_secs: float = 5.0
    # The session snapshot job runs this often (0: never); it is what bounds session streams.
    snapshot_secs: float = SNAPSHOT_SECS
    # Set: ds-sync reads table changes from Electric's Shape API instead of the WAL.
    electric_url: str | None = None
    # Tokens the stack mints (the dev key's) live this long; a restart mints new ones.
    token_ttl_secs: int = 30 * 24 * 3600
    # Extra settings per component (tests shorten timings): DS_* variables.
    server_env: Mapping[str, str] = field(default_factory=dict)
    sync_env: Mapping[str, str] = field(default_factory=dict)
    # False: the embedded Postgres skips fsyncs (tests' throwaway clusters).
    durable_postgres: bool = True
    # More than one: ds-server replicas on the postgres store, behind Envoy.
    replicas: int = 1
    # ds-sync processes sharing the work (one group: leases on shards, a standby per table).
    syncs: int = 1
    # How Envoy spreads requests over replicas (ds_proxy.replicas.POLICIES).
    balance: str = "MAGLEV"
    # The gateway serves TLS and HTTP/2 with a self-signed certificate (`make dev TLS=1`).
    tls: bool = False
    # Component logs in logs_dir: rotated by size (ds_stack.launcher.log_pump).
    log_rotation: LogRotation = field(default_factory=log_rotation_of)

    @property
    def clustered(self) -> bool:
        return self.replicas > 1

    @property
    def server_ports(self) -> list[int]:
        """Each ds-server replica's port (one unless clustered)."""
        return [self.server_port + i * REPLICA_PORT_STEP for i in range(self.replicas)]

    @property
    def state(self) -> Path:
        return self.state_dir.resolve()

    @property
    def streams_dir(self) -> Path:
        """ds-server's store (its default backend, sqlite)."""
        return self.state / "streams"

    @property
    def postgres_dir(self) -> Path:
        return self.state / "postgres"

    @property
    def logs_dir(self) -> Path:
        return self.state / "logs"

    @property
    def envoy_config(self) -> Path:
        return self.state / "envoy.yaml"

    @property
    def tls_dir(self) -> Path:
        """Where the gateway's self-signed certificate is kept (with ``tls``)."""
        return self.state / "tls"

    @property
    def tls_cert_file(self) -> Path:
        """The certificate clients of a TLS stack trust (ds_proxy.local_cert's name)."""
        return self.tls_dir / "gateway.crt"

    @property
    def gateway_url(self) -> str:
        scheme = "https" if self.tls else "http"
        return f"{scheme}://{LOOPBACK}:{self.gateway_port}"

    def trust_env(self) -> dict[str, str]:
        """Environment for the stack's own clients of the gateway: trust its certificate."""
        return {"SSL_CERT_FILE": str(self.tls_cert_file)} if self.tls else {}

    @property
    def server_url(self) -> str:
        return defaults.server_url(self.server_port)

    @property
    def server_metrics_ports(self) -> list[int]:
        """Each replica's /metrics port (one unless clustered)."""
        return [self.server_metrics_port + i * REPLICA_PORT_STEP for i in range(self.replicas)]

    @property
    def server_metrics_url(self) -> str:
        return f"http://{LOOPBACK}:{self.server_metrics_port}/metrics"

    @property
    def server_metrics_urls(self) -> list[str]:
        return [f"http://{LOOPBACK}:{port}/metrics" for port in self.server_metrics_ports]

    @property
    def admin_url(self) -> str:
        return f"http://{LOOPBACK}:{self.admin_port}"

    @property
    def sync_url(self) -> str:
        return f"http://{LOOPBACK}:{self.sync_port}"

    @property
    def sync_ports(self) -> list[int]:
        """Each ds-sync process's /metrics port."""
        return [self.sync_port + i * REPLICA_PORT_STEP for i in range(self.syncs)]

    @property
    def sync_urls(self) -> list[str]:
        return [f"http://{LOOPBACK}:{port}" for port in self.sync_ports]

    @property
    def postgres_url(self) -> str:
        return defaults.postgres_url(self.postgres_port)

    def ports(self) -> dict[str, int]:
        """Every port, by the flag that sets it."""
        return {
            "--port": self.gateway_port,
            "--server-port": self.server_port,
            "--admin-port": self.admin_port,
            "--pg-port": self.postgres_port,
            "--sync-port": self.sync_port,
            "--server-metrics-port": self.server_metrics_port,
            **{
                f"--server-port (replica {i + 1})": port for i, port in enumerate(self.server_ports)
            },
            **{
                f"--server-metrics-port (replica {i + 1})": port
                for i, port in enumerate(self.server_metrics_ports)
            },
            **{f"--sync-port (ds-sync {i + 1})": port for i, port in enumerate(self.sync_ports)},
        }


def throwaway(prefix: str, **changes: Any) -> StackConfig:
    """A stack on free loopback ports, its state in a new directory under /tmp, Postgres
    without fsyncs: what a test runs (``changes`` sets any other field).

    Not under pytest's ``tmp_path``: its base is private to root (0700), and
    Postgres runs as another user, which must reach its data directory.
    """
    state_dir = Path(tempfile.mkdtemp(prefix=prefix))
    state_dir.chmod(0o755)  # mkdtemp's 0700 would keep Postgres's user out
    ports = {
        name: free_port()
        for name in (
            "gateway_port",
            "server_port",
            "admin_port",
            "postgres_port",
            "sync_port",
            "server_metrics_port",
        )
    }
    return StackConfig(state_dir=state_dir, durable_postgres=False, **{**ports, **changes})

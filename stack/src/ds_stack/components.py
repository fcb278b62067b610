"""The stack's components as launch specs, named by their commands.

ds_stack runs the other members' programs (``python -m ds_server``,
``python -m ds_proxy.gateway``, ``python -m ds_sync``) the way a compose
file does, by command and environment: it never imports them, so the
members that use the launcher can depend on ds-stack and not the reverse.
Every component listens on loopback only.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from ds_stack.launcher import ProcessSpec
from ds_stack.ports import LOOPBACK

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

# Printed by the heartbeat producer once its first tick is done.
HEARTBEAT_READY = "heartbeat: ready"
# Printed by ``ds-spark snapshots --every`` once its schedule is set (ds_spark.schedule).
SNAPSHOTS_SCHEDULED = "ds-spark: snapshots scheduled"


def ds_server(
    port: int,
    *,
    env: Mapping[str, str] | None = None,
    argv: Sequence[str] | None = None,
    log_path: Path | None = None,
    log_level: str = "warning",
    ready_timeout_secs: float = 60.0,
    name: str = "ds-server",
) -> ProcessSpec:
    """ds-server on 127.0.0.1:``port``; ``env`` adds to (or overrides) this process's.

    Its ``/metrics`` listener takes a free port unless ``env`` names one
    (``DS_METRICS__PORT``): several servers run side by side in tests.
    """
    child_env = {
        **os.environ,
        "DS_METRICS__PORT": "0",
        **(env or {}),
        # Loopback whatever the caller's environment says: the gateway is the way in.
        "DS_SERVER__HOST": LOOPBACK,
        "DS_SERVER__PORT": str(port),
    }
    command = argv or (sys.executable, "-m", "ds_server", "--log-level", log_level)
    return ProcessSpec(
        name=name,
        argv=tuple(command),
        env=child_env,
        ready_url=f"http://{LOOPBACK}:{port}/healthz",
        log_path=log_path,
        ready_timeout_secs=ready_timeout_secs,
    )


def gateway(
    *,
    listen_port: int,
    upstream_ports: Sequence[int],
    admin_port: int,
    config_path: Path,
    log_path: Path | None = None,
    concurrency: int = 2,
    log_level: str = "warn",
    offer_dev_token: bool = False,
    balance: str = "MAGLEV",
    env: Mapping[str, str] | None = None,
    tls_files: tuple[Path, Path] | None = None,
    local_tls_dir: Path | None = None,
    clock_skew_secs: int | None = None,
) -> ProcessSpec:
    """Envoy with the committed development config on these ports (rendered to ``config_path``).

    Ready when its admin ``/ready`` answers 200; both ports must be free first.
    ``offer_dev_token``: Envoy answers the session viewer's dev token (a dev stack).
    ``env`` adds to this process's environment (``DS_PROXY__*``: the gateway's limits).
    ``tls_files`` (certificate, key) or ``local_tls_dir`` (a self-signed pair
    kept there): the listener serves TLS and HTTP/2.
    ``clock_skew_secs``: the allowance for a token's ``exp``/``nbf`` (default the config's).
    """
    argv = (
        sys.executable,
        "-m",
        "ds_proxy.gateway",
        *("--listen-port", str(listen_port)),
        *(arg for port in upstream_ports for arg in ("--upstream-port", str(port))),
        *("--balance", balance),
        *("--admin-port", str(admin_port)),
        *("--config-out", str(config_path)),
        *("--concurrency", str(concurrency)),
        *("--log-level", log_level),
        *(("--offer-dev-token",) if offer_dev_token else ()),
        *(
            ("--tls-cert-file", str(tls_files[0]), "--tls-key-file", str(tls_files[1]))
            if tls_files
            else ()
        ),
        *(("--local-tls-dir", str(local_tls_dir)) if local_tls_dir else ()),
        *(("--clock-skew-secs", str(clock_skew_secs)) if clock_skew_secs is not None else ()),
    )
    return ProcessSpec(
        name="envoy",
        argv=argv,
        env={**os.environ, **env} if env else None,
        ready_url=f"http://{LOOPBACK}:{admin_port}/ready",
        ports=(listen_port, admin_port),
        log_path=log_path,
        owned_files=(config_path,),
    )


def ds_sync(
    *,
    server_url: str,
    postgres_url: str,
    metrics_port: int,
    token: str | None = None,
    env: Mapping[str, str] | None = None,
    log_path: Path | None = None,
    name: str = "ds-sync",
) -> ProcessSpec:
    """ds-sync in both directions; ready when its ``/healthz`` answers 200."""
    child_env = {
        **os.environ,
        "DS_SERVER_URL": server_url,
        "POSTGRES_URL": postgres_url,
        "DS_SYNC__METRICS_HOST": LOOPBACK,
        "DS_SYNC__METRICS_PORT": str(metrics_port),
        **({"DS_SYNC__TOKEN": token} if token else {}),
        **(env or {}),
    }
    return ProcessSpec(
        name=name,
        argv=(sys.executable, "-m", "ds_sync", "run"),
        env=child_env,
        ready_url=f"http://{LOOPBACK}:{metrics_port}/healthz",
        log_path=log_path,
        # It finishes its transaction in progress before exiting.
        stop_timeout_secs=20.0,
    )


def heartbeat(
    *,
    server_url: str,
    postgres_url: str,
    token: str | None,
    interval_secs: float,
    log_path: Path,
    env: Mapping[str, str] | None = None,
    token_file: Path | None = None,
) -> ProcessSpec:
    """The heartbeat producer; ready once its first tick is written (it has no port).

    ``token_file`` instead of ``token``: read again whenever it changes.
    """
    child_env = {
        **os.environ,
        **(env or {}),
        "DS_SERVER_URL": server_url,
        "POSTGRES_URL": postgres_url,
        "DS_HEARTBEAT__INTERVAL_SECS": str(interval_secs),
        **({"DS_HEARTBEAT__TOKEN": token} if token else {}),
        **({"DS_HEARTBEAT__TOKEN_FILE": str(token_file)} if token_file else {}),
    }
    return ProcessSpec(
        name="heartbeat",
        argv=(sys.executable, "-m", "ds_stack.heartbeat"),
        env=child_env,
        ready_log=HEARTBEAT_READY,
        log_path=log_path,
    )


def snapshot_schedule(
    *,
    server_url: str,
    postgres_url: str,
    token: str | None,
    every_secs: float,
    log_path: Path,
    env: Mapping[str, str] | None = None,
) -> ProcessSpec:
    """``ds-spark snapshots --every``: the session snapshot job on a schedule (no port).

    Each run is a Spark job of its own (a JVM while it lasts); runs never overlap.
    """
    child_env = {
        **os.environ,
        **(env or {}),
        "DS_SERVER_URL": server_url,
        "POSTGRES_URL": postgres_url,
        "SPARK_LOCAL_IP": LOOPBACK,
        **({"DS_SPARK__TOKEN": token} if token else {}),
    }
    return ProcessSpec(
        name="snapshots",
        argv=(sys.executable, "-m", "ds_spark", "snapshots", "--every", f"{every_secs:g}"),
        env=child_env,
        ready_log=SNAPSHOTS_SCHEDULED,
        log_path=log_path,
        # A run in progress gets SIGTERM from the schedule, and a moment to stop its JVM.
        stop_timeout_secs=60.0,
    )

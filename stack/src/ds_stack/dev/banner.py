"""What ``make dev`` prints: the URLs, a token, a psql line, then a line per ready component."""

from __future__ import annotations

import os
import shutil
import sys
from typing import TYPE_CHECKING

from ds_stack.postgres import bin_dir

if TYPE_CHECKING:
    from ds_stack.dev.config import StackConfig

_NAME_WIDTH = 11
# A session event (the message shape of the session contract), so the first
# thing a newcomer writes shows up in the viewer and in session_events.
_FIRST_MESSAGE = (
    '{"type":"message","key":"msg:1","headers":{"operation":"insert"},'
    '"value":{"role":"user","text":"hi","author":"user:alice"}}'
)


def _shown(path: object) -> str:
    """A path relative to the working directory when it is below it."""
    text = str(path)
    here = os.getcwd() + os.sep
    return text[len(here) :] if text.startswith(here) else text


def psql_command() -> str:
    """``psql`` if it is on PATH, else the one bundled with the embedded Postgres."""
    if shutil.which("psql"):
        return "psql"
    return _shown(bin_dir() / "psql")


def urls(config: StackConfig, token: str) -> str:
    """The first thing printed: every URL, a token and a psql line."""
    gateway = config.gateway_url
    feed = f"Electric at {config.electric_url}" if config.electric_url else "native change capture"
    if config.clustered:
        ports = ", ".join(str(port) for port in config.server_ports)
        servers = (
            f"{config.replicas} replicas on 127.0.0.1:{ports}, behind the gateway (store: postgres)"
        )
    else:
        servers = f"{config.server_url}   loopback only, behind the gateway (store: sqlite)"
    metrics = "  ".join(config.server_metrics_urls)
    # A TLS stack's certificate is self-signed: curl trusts it when told to.
    curl = f"curl --cacert {_shown(config.tls_cert_file)}" if config.tls else "curl"
    tls_line = (
        f"\n  tls        {_shown(config.tls_cert_file)}   the gateway's self-signed certificate "
        "(HTTP/2 over TLS; trust it in the browser, or accept the warning)"
        if config.tls
        else ""
    )
    syncs = "  ".join(f"{url}/metrics" for url in config.sync_urls)
    if config.syncs > 1:
        syncs += f"   {config.syncs} processes sharing the work"
    return f"""
durable-sessions dev stack   state in {_shown(config.state)}/   Ctrl-C stops everything

  gateway    {gateway}   Envoy, the way in: a token on every request but /healthz and /ui/
  viewer     {gateway}/ui/   the session viewer (it offers a dev token for every bucket)
  ds-server  {servers}
  metrics    {metrics}   ds-server's, loopback only
  envoy      {config.admin_url}   Envoy admin; Prometheus at {config.admin_url}/stats/prometheus
  ds-sync    {syncs}   both directions, through the gateway ({feed})
  postgres   {config.postgres_url}
  logs       {_shown(config.logs_dir)}/{tls_line}

Paste into a second terminal (this one stays busy):

  export DS_TOKEN={token}
  {curl} -i -X PUT -H "Authorization: Bearer $DS_TOKEN" -H 'Content-Type: application/json' \\
       {gateway}/ds/sessions/room-1
  {curl} -i -X POST -H "Authorization: Bearer $DS_TOKEN" -H 'Content-Type: application/json' \\
       -d '{_FIRST_MESSAGE}' {gateway}/ds/sessions/room-1
  {curl} -N -H "Authorization: Bearer $DS_TOKEN" '{gateway}/ds/sessions/room-1?offset=-1&live=sse'
  .venv/bin/ds-dev psql -c 'SELECT stream_name, event_type, payload FROM session_events'

and open {gateway}/ui/ to see room-1 in the viewer.

(DS_TOKEN: the committed test-only key, every bucket, {config.token_ttl_secs // 86400} days.)

Starting:"""


def ready_line(component: str, seconds: float, config: StackConfig) -> str:
    """One component is ready."""
    if component.startswith("ds-sync-"):
        index = int(component.rsplit("-", 1)[1]) - 1
        url = config.sync_urls[index]
        return (
            f"  {component:<{_NAME_WIDTH}} ready  {seconds:5.1f} s   {url}/metrics, a share "
            "of the session streams; mirrors items or stands by for it"
        )
    if component.startswith("ds-server-"):
        replica = int(component.rsplit("-", 1)[1]) - 1
        port = config.server_ports[replica]
        return f"  {component:<{_NAME_WIDTH}} ready  {seconds:5.1f} s   127.0.0.1:{port}"
    detail = {
        "postgres": f"{config.postgres_url}, data in {_shown(config.postgres_dir)}/",
        "ds-server": f"{config.server_url}, streams in {_shown(config.streams_dir)}/",
        "envoy": f"{config.gateway_url}",
        "ds-sync": "session streams -> session_events, items -> pg-items",
        "heartbeat": f"every {config.heartbeat_secs:g} s: items, then session-events",
        "snapshots": f"ds-spark snapshots every {config.snapshot_secs:g} s "
        f"(log: {_shown(config.logs_dir)}/snapshots.log)",
    }[component]
    return f"  {component:<{_NAME_WIDTH}} ready  {seconds:5.1f} s   {detail}"


def say(line: str) -> None:
    print(line, flush=True)


def complain(line: str) -> None:
    print(f"ds-dev: {line}", file=sys.stderr, flush=True)

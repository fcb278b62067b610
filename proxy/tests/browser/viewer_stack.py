"""The stack the viewer's browser tests run against, and their tokens."""

from __future__ import annotations

import contextlib
import json
import os
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
from ds_proxy.tokens import bucket_token
from ds_stack import components
from ds_stack.launcher import Process
from ds_stack.ports import free_port
from durable_sessions.protocol.headers import STREAM_NEXT_OFFSET

if TYPE_CHECKING:
    from collections.abc import Iterator

BUCKET = "sessions"
# ds-server ends each SSE response this often, so every test sees the page reconnect.
SSE_RECONNECT_SECS = 2


@dataclass(frozen=True)
class ViewerStack:
    url: str
    admin: httpx.Client  # a client of the gateway with a token for every bucket
    envoy_log: Path  # Envoy's access log (JSON lines) and its own messages

    def access_log(self) -> list[dict[str, object]]:
        """Envoy's access log entries so far."""
        lines = self.envoy_log.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.startswith("{")]

    def session(self, session_id: str) -> str:
        """Create the JSON-mode session stream ``session_id``; its /ds path."""
        path = f"/ds/{BUCKET}/{session_id}"
        created = self.admin.put(path, headers={"Content-Type": "application/json"})
        assert created.status_code == 201, created.text
        return path

    def append(self, path: str, *messages: object) -> str:
        """Append each message on its own (each a POST); the tail offset after the last."""
        offset = ""
        for message in messages:
            response = self.admin.post(path, json=message)
            assert response.status_code in (200, 204), response.text
            offset = response.headers[STREAM_NEXT_OFFSET]
        return offset


@contextlib.contextmanager
def running_stack(
    logs: Path, *, sse_reconnect_secs: float, local_tls_dir: Path | None = None
) -> Iterator[ViewerStack]:
    """ds-server (memory store, gateway auth) behind Envoy, on free loopback ports.

    The only place these tests start processes (the launcher `make dev` uses,
    Envoy with the dev token route as in `make dev`; with ``local_tls_dir``,
    TLS and HTTP/2 with a self-signed certificate as in `make dev TLS=1`).
    """
    listen, server_port, admin_port = (free_port() for _ in range(3))
    server = Process(
        components.ds_server(
            server_port,
            env={
                "DS_AUTH__MODE": "gateway",
                "DS_STORAGE__MODE": "memory",
                "DS_SERVER__SSE_RECONNECT_INTERVAL_SECS": str(sse_reconnect_secs),
            },
            log_path=logs / "ds-server.log",
        )
    )
    gateway = Process(
        components.gateway(
            listen_port=listen,
            upstream_ports=[server_port],
            admin_port=admin_port,
            config_path=logs / "envoy.yaml",
            log_path=logs / "envoy.log",
            offer_dev_token=True,
            local_tls_dir=local_tls_dir,
        )
    )
    scheme = "https" if local_tls_dir is not None else "http"
    url = f"{scheme}://127.0.0.1:{listen}"
    server.start()
    try:
        gateway.start()
        token = bucket_token("admin", read=("*",), write=("*",))
        headers = {"Authorization": f"Bearer {token}"}
        verify = (
            ssl.create_default_context(cafile=local_tls_dir / "gateway.crt")
            if local_tls_dir is not None
            else True
        )
        with httpx.Client(base_url=url, headers=headers, timeout=30.0, verify=verify) as admin:
            assert admin.put(f"/ds/{BUCKET}").status_code == 201
            yield ViewerStack(url, admin, logs / "envoy.log")
    finally:
        gateway.stop()
        server.stop()


def user_token(sub: str) -> str:
    """A valid token for ``sub`` on the sessions bucket."""
    return bucket_token(sub, read=(BUCKET,), write=(BUCKET,))


def screenshot_target() -> Path | None:
    """Where to save the docs' screenshot (`make viewer-shot` sets it), or None."""
    target = os.environ.get("DS_VIEWER_SCREENSHOT")
    return Path(target) if target else None

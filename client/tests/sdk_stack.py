"""A real ds-server behind a real Envoy for the SDK's integration tests, on free ports."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import httpx
from ds_proxy.tokens import bucket_token
from ds_stack import components
from ds_stack.launcher import Process
from ds_stack.ports import free_port
from durable_sessions.protocol import split_json_arrays

if TYPE_CHECKING:
    from pathlib import Path

SERVER_ENV = {
    "DS_AUTH__MODE": "gateway",
    "DS_STORAGE__MODE": "memory",
    "DS_SERVER__SSE_RECONNECT_INTERVAL_SECS": "2",
    "DS_SERVER__LONG_POLL_TIMEOUT_SECS": "2",
}


class SdkStack:
    """ds-server (memory store, gateway auth) and Envoy; ``url`` is Envoy's."""

    def __init__(self, workdir: Path, server_env: dict[str, str] | None = None) -> None:
        listen_port, server_port, admin_port = free_port(), free_port(), free_port()
        self.url = f"http://127.0.0.1:{listen_port}"
        self.token = bucket_token("sdk-tests", read=("*",), write=("*",))
        self.server = Process(
            components.ds_server(
                server_port,
                env={**SERVER_ENV, **(server_env or {})},
                log_path=workdir / "ds-server.log",
            )
        )
        self.envoy = Process(
            components.gateway(
                listen_port=listen_port,
                upstream_ports=[server_port],
                admin_port=admin_port,
                config_path=workdir / "envoy.yaml",
                log_path=workdir / "envoy.log",
            )
        )

    def start(self) -> None:
        self.server.start()
        try:
            self.envoy.start()
        except BaseException:
            self.server.stop()
            raise

    def stop(self) -> None:
        self.envoy.stop()
        self.server.stop()

    def client(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {self.token}"}, timeout=30
        )

    def new_bucket(self) -> str:
        bucket = "sdk-" + uuid.uuid4().hex[:10]
        with self.client() as http:
            assert http.put(f"/ds/{bucket}").status_code == 201
        return bucket

    def new_stream(self, bucket: str, content_type: str = "application/json") -> str:
        """A new stream's URL on the protocol surface, through the gateway."""
        url = f"{self.url}/v1/stream/{bucket}/{uuid.uuid4().hex[:12]}"
        with self.client() as http:
            response = http.put(url, headers={"Content-Type": content_type})
            assert response.status_code == 201, response.text
        return url

    def read_json(self, url: str) -> list[Any]:
        """Every message of a JSON stream, decoded, from the beginning."""
        import json

        found: list[Any] = []
        offset = "-1"
        with self.client() as http:
            while True:
                response = http.get(url, params={"offset": offset})
                assert response.status_code == 200, response.text
                found += [json.loads(raw) for raw in split_json_arrays(response.content)]
                offset = response.headers["Stream-Next-Offset"]
                if response.headers.get("Stream-Up-To-Date") == "true":
                    return found

"""The gateway tests' stack (a real ds-server behind a real Envoy), with what the SDK's
integration tests need on top: a token for every bucket, buckets, streams, reads."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx
from durable_sessions.protocol import split_json_arrays
from durable_sessions.sessions import session_url

# The same launcher, config and test-only key as the gateway's own tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "proxy" / "tests"))
from gateway_stack import ADMIN, GatewayStack


class SdkStack(GatewayStack):
    """ds-server (memory store, gateway auth) and Envoy; ``url`` is Envoy's."""

    token = ADMIN

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

    def new_session(self, bucket: str | None = None) -> str:
        """A new session's URL (``/ds/{bucket}/{id}``, JSON mode), in a new bucket by default."""
        session_id = f"room-{uuid.uuid4().hex[:8]}"
        url = session_url(self.url, session_id, bucket=bucket or self.new_bucket())
        with self.client() as http:
            response = http.put(url, headers={"Content-Type": "application/json"})
            assert response.status_code == 201, response.text
        return url

    def read_json(self, url: str) -> list[Any]:
        """Every message of a JSON stream, decoded, from the beginning."""
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

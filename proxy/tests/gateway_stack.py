"""A real Envoy (the committed dev config) in front of a real ds-server, on free ports."""

from __future__ import annotations

import base64
import contextlib
import json
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ds_proxy.tokens import bucket_token
from ds_stack import components
from ds_stack.launcher import Process
from ds_stack.ports import free_port

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

RECORDING_SERVER = Path(__file__).with_name("recording_server.py")
REQUEST_ID = "X-Test-Request"
# Live reads end quickly so streaming tests can watch several reconnect cycles.
SSE_RECONNECT_SECS = 1
LONG_POLL_SECS = 1
STALLED_READER_SECS = 3
SERVER_ENV = {
    "DS_STORAGE__MODE": "memory",
    "DS_SERVER__SSE_RECONNECT_INTERVAL_SECS": str(SSE_RECONNECT_SECS),
    "DS_SERVER__LONG_POLL_TIMEOUT_SECS": str(LONG_POLL_SECS),
    "DS_LIMITS__MAX_STREAM_BYTES": str(64 * 1024 * 1024),
    "DS_LIMITS__MAX_MEMORY_BYTES": str(512 * 1024 * 1024),
    # Short, so tests can watch a stalled reader be disconnected.
    "DS_SERVER__STALLED_READER_TIMEOUT_SECS": str(STALLED_READER_SECS),
}


@dataclass
class Seen:
    """One request as the server received it."""

    method: str
    path: str
    query: str
    headers: list[tuple[str, str]]

    def all(self, name: str) -> list[str]:
        lowered = name.lower()
        return [value for key, value in self.headers if key == lowered]

    def one(self, name: str) -> str | None:
        values = self.all(name)
        assert len(values) <= 1, f"{name} arrived {len(values)} times"
        return values[0] if values else None

    def claims(self) -> dict[str, Any] | None:
        """The verified token payload the gateway forwarded, decoded; None without one."""
        payload = self.one("X-JWT-Payload")
        if payload is None:
            return None
        raw = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
        claims: dict[str, Any] = json.loads(raw)
        return claims


class GatewayStack:
    """Start both processes; ``url`` is Envoy's; ``seen()`` reads the server's record."""

    def __init__(
        self,
        workdir: Path,
        server_env: dict[str, str] | None = None,
        gateway_env: dict[str, str] | None = None,
        tls_files: tuple[Path, Path] | None = None,
        *,
        clock_skew_secs: int | None = None,
    ) -> None:
        self.listen_port = free_port()
        self.server_port = free_port()
        self.admin_port = free_port()
        scheme = "https" if tls_files else "http"
        self.url = f"{scheme}://127.0.0.1:{self.listen_port}"
        self.server_url = f"http://127.0.0.1:{self.server_port}"
        self.record = workdir / "requests.jsonl"
        self.record.touch()
        self.touch_record = workdir / "touches.jsonl"
        self.touch_record.touch()
        self._logs = workdir
        self.server = Process(
            components.ds_server(
                self.server_port,
                env={
                    "DS_AUTH__MODE": "gateway",
                    **SERVER_ENV,
                    **(server_env or {}),
                    "DS_TEST_RECORD_FILE": str(self.record),
                    "DS_TEST_TOUCH_FILE": str(self.touch_record),
                },
                argv=[sys.executable, str(RECORDING_SERVER)],
                log_path=workdir / "ds-server.log",
            )
        )
        self.envoy = Process(
            components.gateway(
                listen_port=self.listen_port,
                upstream_ports=[self.server_port],
                admin_port=self.admin_port,
                config_path=workdir / "envoy.yaml",
                log_path=workdir / "envoy.log",
                env=gateway_env,
                tls_files=tls_files,
                clock_skew_secs=clock_skew_secs,
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

    def access_log_entry(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first of Envoy's access log entries (JSON lines) that ``predicate`` accepts."""
        deadline = time.monotonic() + 5.0
        while True:
            text = (self._logs / "envoy.log").read_text(encoding="utf-8")
            for line in text.splitlines():
                if line.startswith("{") and predicate(entry := json.loads(line)):
                    return entry
            assert time.monotonic() < deadline, "no such access log entry"
            time.sleep(0.05)

    def access_log_lines(self) -> list[str]:
        """Every line Envoy has written so far."""
        return (self._logs / "envoy.log").read_text(encoding="utf-8").splitlines()

    def seen(self, request_id: str, timeout: float = 5.0) -> Seen | None:
        """The request tagged ``request_id`` as the server saw it, or None if it never came."""
        deadline = time.monotonic() + timeout
        while True:
            for line in self.record.read_text(encoding="utf-8").splitlines():
                entry: dict[str, Any] = json.loads(line)
                headers = [(k, v) for k, v in entry["headers"]]
                if (REQUEST_ID.lower(), request_id) in headers:
                    return Seen(entry["method"], entry["path"], entry["query"], headers)
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.05)

    def store_touches(self) -> list[tuple[str | None, str, str]]:
        """Every (bucket, mode, name) the server's store was asked about, in order."""
        lines = self.touch_record.read_text(encoding="utf-8").splitlines()
        return [(bucket, mode, what) for bucket, mode, what in map(json.loads, lines)]

    def reached_server(self, request_id: str) -> bool:
        """Whether a request got past the gateway; call it once its response has arrived.

        The recorder writes before the application runs, so a request that
        reached the server is on record before any response to it exists.
        """
        return self.seen(request_id, timeout=0.0) is not None


@contextlib.contextmanager
def running_gateway(workdir: Path, **options: Any) -> Iterator[GatewayStack]:
    """A ``GatewayStack`` (``options`` as its constructor takes them), stopped on exit."""
    stack = GatewayStack(workdir, **options)
    stack.start()
    try:
        yield stack
    finally:
        stack.stop()


def tag() -> tuple[str, dict[str, str]]:
    """A fresh request id and the header carrying it."""
    request_id = uuid.uuid4().hex
    return request_id, {REQUEST_ID: request_id}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def unique(prefix: str = "s") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


ADMIN = bucket_token("admin", read=("*",), write=("*",))

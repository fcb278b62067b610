"""The slow-reader suite's servers: settings, and a handle to make streams and append."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    import httpx
    from support.server_process import ServerProcess

BACKENDS = ("memory", "sqlite", "file-durable", "file-fast")
# A reader that takes nothing for this long is disconnected; short, so a
# test can watch it happen, long enough that a reader paused briefly is not.
STALL_TIMEOUT_SECS = 3.0
OCTET = "application/octet-stream"


@dataclass(frozen=True, slots=True)
class Server:
    backend: str
    process: ServerProcess
    http: httpx.Client

    @property
    def port(self) -> int:
        return self.process.port

    def new_stream(self, content_type: str = OCTET) -> str:
        path = f"/v1/stream/slow-{uuid.uuid4().hex[:12]}"
        response = self.http.put(path, headers={"Content-Type": content_type})
        assert response.status_code == 201, response.text
        return path

    def append(self, path: str, body: bytes, content_type: str = OCTET) -> None:
        response = self.http.post(path, content=body, headers={"Content-Type": content_type})
        assert response.status_code in (200, 204), response.text


def server_env(backend: str, data_dir: Path) -> dict[str, str]:
    return {
        "DS_STORAGE__MODE": backend,
        "DS_STORAGE__DATA_DIR": str(data_dir),
        "DS_LIMITS__MAX_STREAM_BYTES": str(256 * 1024 * 1024),
        "DS_LIMITS__MAX_MEMORY_BYTES": str(1024 * 1024 * 1024),
        "DS_SERVER__STALLED_READER_TIMEOUT_SECS": str(STALL_TIMEOUT_SECS),
        "DS_SERVER__LONG_POLL_TIMEOUT_SECS": "5",
    }

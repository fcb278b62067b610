"""Helpers of the extension suite: server settings, a bucket client, bootstrap and SSE parsing."""

from __future__ import annotations

import contextlib
import email.parser
import email.policy
import json
import os
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from httpx_sse import connect_sse

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    import httpx
    from support.server_process import ServerProcess

BACKENDS = ("memory", "sqlite", "file-durable", "file-fast", "postgres")
DURABLE_BACKENDS = ("sqlite", "file-durable", "file-fast")
# Small enough that the 413 of an oversized stream or snapshot is cheap to provoke.
MAX_STREAM_BYTES = 8 * 1024 * 1024
READ_CHUNK_BYTES = 4096
LONG_POLL_SECS = 0.5
OCTET = "application/octet-stream"
JSON_TYPE = "application/json"


def server_env(backend: str, data_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of a suite server: small limits and short live timeouts."""
    return {
        "DS_STORAGE__MODE": backend,
        "DS_STORAGE__DATA_DIR": str(data_dir),
        "DS_LIMITS__MAX_RETAINED_BYTES": str(MAX_STREAM_BYTES),
        "DS_LIMITS__MAX_SNAPSHOT_BYTES": str(MAX_STREAM_BYTES),
        "DS_LIMITS__MAX_MEMORY_BYTES": str(512 * 1024 * 1024),
        # Small read pages make bootstraps of small streams span several pages.
        "DS_SERVER__READ_CHUNK_BYTES": str(READ_CHUNK_BYTES),
        "DS_SERVER__LONG_POLL_TIMEOUT_SECS": str(LONG_POLL_SECS),
        "DS_SERVER__SSE_RECONNECT_INTERVAL_SECS": "2",
        **extra,
    }


@dataclass(frozen=True, slots=True)
class Backend:
    name: str
    url: str
    data_dir: Path
    process: ServerProcess


def new_bucket_id() -> str:
    return "t-" + uuid.uuid4().hex[:16]


def offset(position: int) -> str:
    """The 20-digit offset of a byte position."""
    return f"{position:020d}"


@dataclass(frozen=True, slots=True)
class Bucket:
    """Requests to the streams of one bucket, relative to the server's base URL."""

    http: httpx.Client
    id: str

    @classmethod
    def create(cls, http: httpx.Client) -> Bucket:
        bucket_id = new_bucket_id()
        response = http.put(f"/ds/{bucket_id}")
        assert response.status_code == 201, response.text
        return cls(http, bucket_id)

    def path(self, stream: str, suffix: str = "") -> str:
        # Dots too: the client would resolve "." and ".." segments away before sending.
        encoded = quote(stream, safe="").replace(".", "%2E")
        return f"/ds/{self.id}/{encoded}{suffix}"

    def snapshot_path(self, stream: str, snapshot_offset: str) -> str:
        return self.path(stream, "/snapshot/" + quote(snapshot_offset, safe=""))

    def create_stream(
        self, stream: str, *, content_type: str = OCTET, body: bytes = b""
    ) -> httpx.Response:
        response = self.http.put(
            self.path(stream), content=body, headers={"Content-Type": content_type}
        )
        assert response.status_code == 201, response.text
        return response

    def append(self, stream: str, body: bytes, *, content_type: str = OCTET) -> str:
        """Append and return the new Stream-Next-Offset."""
        response = self.http.post(
            self.path(stream), content=body, headers={"Content-Type": content_type}
        )
        assert response.status_code in (200, 204), response.text
        return response.headers["Stream-Next-Offset"]

    def append_json(self, stream: str, *messages: Any) -> list[str]:
        """Append each message on its own; return the offset after each."""
        return [
            self.append(stream, json.dumps(message).encode(), content_type=JSON_TYPE)
            for message in messages
        ]

    def publish(
        self, stream: str, snapshot_offset: str, blob: bytes, content_type: str | None = None
    ) -> httpx.Response:
        headers = {"Content-Type": content_type} if content_type is not None else {}
        return self.http.put(
            self.snapshot_path(stream, snapshot_offset), content=blob, headers=headers
        )

    def read(self, stream: str, read_offset: str, **params: str) -> httpx.Response:
        return self.http.get(self.path(stream), params={"offset": read_offset, **params})

    def read_all(self, stream: str, read_offset: str = "-1") -> tuple[bytes, str]:
        """Catch-up reads from ``read_offset`` to the tail: (bytes, next offset); byte streams."""
        data = b""
        while True:
            response = self.read(stream, read_offset)
            assert response.status_code == 200, response.text
            data += response.content
            read_offset = response.headers["Stream-Next-Offset"]
            if response.headers.get("Stream-Up-To-Date") == "true":
                return data, read_offset

    def read_json(self, stream: str, read_offset: str = "-1") -> tuple[list[Any], str]:
        """Catch-up reads of a JSON stream: (messages, next offset)."""
        messages: list[Any] = []
        while True:
            response = self.read(stream, read_offset)
            assert response.status_code == 200, response.text
            messages.extend(response.json())
            read_offset = response.headers["Stream-Next-Offset"]
            if response.headers.get("Stream-Up-To-Date") == "true":
                return messages, read_offset

    def bootstrap(self, stream: str, **params: str) -> httpx.Response:
        return self.http.get(self.path(stream, "/bootstrap"), params=params)


@dataclass(frozen=True, slots=True)
class Part:
    content_type: str
    body: bytes


def parse_bootstrap(response: httpx.Response) -> list[Part]:
    """The parts of a bootstrap body, parsed by the standard library's MIME parser.

    The response's Content-Type is prepended as the entity's header, so the
    body must be a complete, well-formed RFC 2046 multipart entity.
    """
    content_type = response.headers["Content-Type"]
    raw = b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + response.content
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(raw)
    assert message.get_content_type() == "multipart/mixed"
    assert message.is_multipart(), "bootstrap body is not a multipart entity"
    assert not message.defects, f"multipart defects: {message.defects}"
    parts = []
    for part in message.iter_parts():
        assert not part.defects, f"part defects: {part.defects}"
        body = part.get_payload(decode=True)
        assert isinstance(body, bytes)
        # The header as sent: the parsed form would re-quote its parameters.
        [content_type] = [v for k, v in part.raw_items() if k.lower() == "content-type"]
        parts.append(Part(content_type, body))
    return parts


@dataclass(frozen=True, slots=True)
class SseEvent:
    event: str
    data: str

    def control(self) -> dict[str, Any]:
        assert self.event == "control"
        value: dict[str, Any] = json.loads(self.data)
        return value


def sse_events(
    http: httpx.Client,
    path: str,
    read_offset: str,
    *,
    until: Callable[[SseEvent], bool],
) -> tuple[httpx.Headers, list[SseEvent]]:
    """Read ``live=sse`` events until ``until`` holds for one (included) or the server closes."""
    events: list[SseEvent] = []
    params = {"offset": read_offset, "live": "sse"}
    with connect_sse(http, "GET", path, params=params) as source:
        response = source.response
        assert response.status_code == 200, response.read()
        for sse in source.iter_sse():
            event = SseEvent(sse.event, sse.data)
            events.append(event)
            if until(event):
                break
        return response.headers, events


def up_to_date(event: SseEvent) -> bool:
    return event.event == "control" and bool(event.control().get("upToDate"))


def disk_usage(root: Path) -> int:
    """Bytes allocated on disk under ``root`` (blocks, as ``du`` counts; holes are free)."""
    total = 0
    for directory, _, files in os.walk(root):
        for name in files:
            with contextlib.suppress(FileNotFoundError):  # removed while walking
                total += os.lstat(os.path.join(directory, name)).st_blocks * 512
    return total


def wait_for(condition: Callable[[], bool], timeout: float, interval: float = 0.1) -> bool:
    """Poll until ``condition()`` holds; False once ``timeout`` seconds have passed."""
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)

"""Writing test streams to a real ds-server."""

from __future__ import annotations

from typing import Any

import httpx
import msgspec


def create_stream(url: str, content_type: str = "application/json") -> None:
    response = httpx.put(url, headers={"Content-Type": content_type})
    assert response.status_code == 201, response.text


def append(url: str, *messages: Any) -> str:
    """Append each message as its own POST; the tail afterwards."""
    tail = ""
    for message in messages:
        body = message if isinstance(message, bytes) else msgspec.json.encode(message)
        response = httpx.post(url, content=body, headers={"Content-Type": "application/json"})
        assert response.status_code in (200, 204), response.text
        tail = response.headers["Stream-Next-Offset"]
    return tail


def append_batch(url: str, messages: list[Any]) -> str:
    """Append many messages in one POST (a JSON array is flattened); the tail afterwards."""
    response = httpx.post(
        url, content=msgspec.json.encode(messages), headers={"Content-Type": "application/json"}
    )
    assert response.status_code in (200, 204), response.text
    return response.headers["Stream-Next-Offset"]

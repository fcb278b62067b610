"""Clients the scenarios use: reads, an idempotent producer that retries, a resuming reader."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx
from durable_sessions import Update, follow
from durable_streams import DurableStreamError

if TYPE_CHECKING:
    from collections.abc import Callable

JSON = {"Content-Type": "application/json"}
# Statuses a gateway answers while the server behind it restarts.
UNAVAILABLE = (502, 503, 504)


def wait_until(check: Callable[[], Any], timeout: float = 60.0, what: str = "it") -> Any:
    """Poll ``check`` until it returns something truthy; fail after ``timeout`` (a hang guard)."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.1)


def read_all(client: httpx.Client, path: str, offset: str = "-1") -> tuple[list[Any], str]:
    """Every message from ``offset`` to the tail (catch-up reads), and the offset after them."""
    messages: list[Any] = []
    while True:
        response = client.get(path, params={"offset": offset})
        assert response.status_code == 200, f"{response.status_code} {response.text}"
        messages += json.loads(response.content or b"[]")
        offset = response.headers["Stream-Next-Offset"]
        if response.headers.get("Stream-Up-To-Date") == "true":
            return messages, offset


def create(client: httpx.Client, path: str, *messages: Any) -> None:
    """Create a JSON stream (with ``messages`` as its first data, if any)."""
    body = json.dumps(list(messages)).encode() if messages else b""
    response = client.put(path, content=body, headers=JSON)
    assert response.status_code == 201, f"PUT {path}: {response.status_code} {response.text}"


def append(client: httpx.Client, path: str, *messages: Any) -> str:
    """Append ``messages`` in one request; the offset after them."""
    response = client.post(path, content=json.dumps(list(messages)).encode(), headers=JSON)
    assert response.status_code in (200, 204), f"POST {path}: {response.status_code}"
    return response.headers["Stream-Next-Offset"]


@dataclass
class Producer:
    """An idempotent producer: every append is retried, unchanged, until acknowledged.

    A retry of an append the server already stored answers 204 and is not
    stored again, so a producer that keeps retrying through a server crash
    writes each message exactly once.
    """

    client: httpx.AsyncClient
    path: str
    producer_id: str
    epoch: int = 0
    seq: int = 0
    retries: int = 0
    duplicates: int = 0

    async def append(self, *messages: Any) -> None:
        body = json.dumps(list(messages)).encode()
        headers = {
            **JSON,
            "Producer-Id": self.producer_id,
            "Producer-Epoch": str(self.epoch),
            "Producer-Seq": str(self.seq),
        }
        while True:
            try:
                response = await self.client.post(self.path, content=body, headers=headers)
            except httpx.TransportError:
                response = None
            if response is not None and response.status_code in (200, 204):
                self.duplicates += response.status_code == 204
                self.seq += 1
                return
            if response is not None and response.status_code not in UNAVAILABLE:
                raise AssertionError(f"POST {self.path}: {response.status_code} {response.text}")
            self.retries += 1
            await asyncio.sleep(0.1)


@dataclass
class Reader:
    """Follows a stream over SSE, resuming from its last offset whenever the connection ends."""

    url: str
    headers: dict[str, str]
    offset: str = "-1"
    messages: list[Any] = field(default_factory=list)
    reconnects: int = 0

    async def read_until(
        self, done: Callable[[list[Any]], bool], give_up_secs: float = 90.0
    ) -> None:
        """Read until ``done(messages)`` holds (a hang guard: ``give_up_secs``)."""
        async with asyncio.timeout(give_up_secs):
            async with httpx.AsyncClient(timeout=httpx.Timeout(10.0, read=30.0)) as http:
                while not done(self.messages):
                    try:
                        await self._follow(http, done)
                    except (httpx.HTTPError, DurableStreamError):
                        self.reconnects += 1
                        await asyncio.sleep(0.2)

    async def _follow(self, http: httpx.AsyncClient, done: Callable[[list[Any]], bool]) -> None:
        events = follow(self.url, offset=self.offset, live="sse", client=http, headers=self.headers)
        async with contextlib.aclosing(events):
            async for event in events:
                if isinstance(event, Update):
                    self.messages += [json.loads(message) for message in event.messages]
                    self.offset = event.next_offset
                    if done(self.messages):
                        return

"""Clients the scenarios use: reads, an idempotent producer that retries, a resuming reader."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx
from durable_sessions import AsyncIdempotentProducer, RetryPolicy, Update, follow
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


# Attempts of producers' appends, per (stream path, producer id): failed ones (no answer,
# or the gateway's 502/503/504) and duplicates (204: stored already).
FAILED_ATTEMPTS: Counter[tuple[str, str]] = Counter()
DUPLICATES: Counter[tuple[str, str]] = Counter()


class CountingTransport(httpx.AsyncHTTPTransport):
    """Counts what producers' retries are made of, by the request's Producer-Id."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        producer = (request.url.path, request.headers.get("Producer-Id", ""))
        try:
            response = await super().handle_async_request(request)
        except httpx.TransportError:
            FAILED_ATTEMPTS[producer] += 1
            raise
        FAILED_ATTEMPTS[producer] += response.status_code in UNAVAILABLE
        DUPLICATES[producer] += request.method == "POST" and response.status_code == 204
        return response


class Producer:
    """The SDK's idempotent producer, one append (a batch) acknowledged at a time.

    It resends an append, unchanged, until acknowledged; a retry of one the
    server already stored answers 204 and is not stored again, so a producer
    that keeps retrying through a server crash writes each message exactly once.
    ``client`` (with a `CountingTransport`, as ``E2E.async_client`` makes
    them) carries its requests.
    """

    def __init__(self, client: httpx.AsyncClient, path: str, producer_id: str) -> None:
        self.producer_id = producer_id
        self._key = (path, producer_id)  # the gateway URL has no path of its own
        self._producer = AsyncIdempotentProducer(
            path,
            producer_id,
            linger_ms=0,
            content_type=JSON["Content-Type"],
            retry=RetryPolicy(max_delay_secs=0.5, give_up_after_secs=None),
            client=client,
        )

    @property
    def seq(self) -> int:
        """Appends acknowledged so far (each is one batch, one seq)."""
        return self._producer.next_seq

    @property
    def retries(self) -> int:
        """Attempts that ended without an answer, or with the gateway's 502/503/504."""
        return FAILED_ATTEMPTS[self._key]

    @property
    def duplicates(self) -> int:
        """Appends answered 204: a retry of one the server had stored already."""
        return DUPLICATES[self._key]

    async def append(self, *messages: Any) -> None:
        """Append ``messages`` in one batch and wait until it is acknowledged."""
        for message in messages:
            self._producer.append(message)
        await self._producer.flush()


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

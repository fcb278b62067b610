"""Idempotent producers that retry every append whose outcome a crash left unknown.

A producer sends seq 0, 1, 2, ... at a fixed epoch, one append in flight at
a time. A connection error, a timeout or a 5xx means the outcome is
unknown: the same seq is sent again with the same body until it is
acknowledged (200 accepted now, 204 it had been written before the crash).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import httpx
from crash_payloads import LARGE, byte_payload, json_body, json_messages

if TYPE_CHECKING:
    from collections.abc import Callable

OCTET = "application/octet-stream"
JSON_TYPE = "application/json"
EPOCH = 1
_RETRY_DELAY_SECS = 0.02
# Longer than any restart: a producer that gets no answer for this long fails the test.
_GIVE_UP_SECS = 60.0


@dataclass(frozen=True, slots=True)
class Ack:
    """How one append was acknowledged."""

    status: int
    next_offset: int
    size: int
    attempts: int


@dataclass(slots=True)
class Producer:
    """One ``Producer-Id`` appending to one stream."""

    name: str
    stream: str
    seed: int
    json: bool = False
    # The closer's last append carries Stream-Closed: true; it sends nothing after.
    close_at: int | None = None
    acks: dict[int, Ack] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    # Size of the body on the wire right now (0: none), for the kill report.
    in_flight: int = 0

    @property
    def content_type(self) -> str:
        return JSON_TYPE if self.json else OCTET

    def body(self, seq: int) -> bytes:
        """What append ``seq`` sends: regenerated, never stored."""
        if self.json:
            return json_body(json_messages(self.seed, self.name, seq))
        return byte_payload(self.seed, self.name, seq)

    def stored_size(self, seq: int) -> int:
        """The bytes append ``seq`` adds to the stream's offsets."""
        if self.json:
            return sum(len(message) for message in json_messages(self.seed, self.name, seq))
        return len(self.body(seq))

    def headers(self, seq: int, *, epoch: int = EPOCH) -> dict[str, str]:
        """Content type and producer headers of append ``seq``."""
        headers = {
            "Content-Type": self.content_type,
            "Producer-Id": self.name,
            "Producer-Epoch": str(epoch),
            "Producer-Seq": str(seq),
        }
        if seq == self.close_at:
            headers["Stream-Closed"] = "true"
        return headers

    async def run(
        self, http: httpx.AsyncClient, stop: asyncio.Event, on_large: Callable[[], None]
    ) -> None:
        """Append until ``stop`` is set (finishing the append in flight) or the stream closes."""
        seq = 0
        while not stop.is_set():
            body = self.body(seq)
            if len(body) >= LARGE:
                on_large()
            ack = await self._append_until_acked(http, seq, body)
            if ack is None:
                return
            self.acks[seq] = ack
            if seq == self.close_at:
                return
            seq += 1

    async def _append_until_acked(
        self, http: httpx.AsyncClient, seq: int, body: bytes
    ) -> Ack | None:
        deadline = time.monotonic() + _GIVE_UP_SECS
        attempts = 0
        while True:
            attempts += 1
            self.in_flight = len(body)
            try:
                response = await http.post(self.stream, content=body, headers=self.headers(seq))
            except httpx.TransportError:
                response = None
            finally:
                self.in_flight = 0
            if response is not None and response.status_code in (200, 204):
                return self._ack(seq, response, attempts)
            if response is not None and response.status_code < 500:
                self.errors.append(
                    f"{self.name}#{seq} (attempt {attempts}): {response.status_code} "
                    f"{response.text!r} {dict(response.headers)}"
                )
                return None
            if time.monotonic() > deadline:
                self.errors.append(f"{self.name}#{seq}: no answer for {_GIVE_UP_SECS:.0f}s")
                return None
            await asyncio.sleep(_RETRY_DELAY_SECS)

    def _ack(self, seq: int, response: httpx.Response, attempts: int) -> Ack:
        status = response.status_code
        headers = response.headers
        echoed_seq = int(headers.get("Producer-Seq", "-1"))
        if headers.get("Producer-Epoch") != str(EPOCH):
            self.errors.append(f"{self.name}#{seq}: {status} echoed epoch {headers!r}")
        if status == 200 and echoed_seq != seq:
            self.errors.append(f"{self.name}#{seq}: 200 echoed Producer-Seq {echoed_seq}")
        if status == 204 and echoed_seq < seq:
            self.errors.append(f"{self.name}#{seq}: 204 but Producer-Seq is only {echoed_seq}")
        if status == 204 and attempts == 1:
            self.errors.append(f"{self.name}#{seq}: 204 duplicate on its first attempt")
        return Ack(
            status=status,
            next_offset=int(headers["Stream-Next-Offset"]),
            size=self.stored_size(seq),
            attempts=attempts,
        )

"""Messages into batches, batches into request bodies; a batch's retry policy."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from durable_sessions.producer.errors import DeliveryTimeoutError
from durable_sessions.protocol.json_mode import json_batch

_encode_json = msgspec.json.Encoder().encode


def encode_message(body: Any) -> bytes:
    """One message's bytes: bytes as they are, a string as UTF-8 (for a JSON stream:
    already-serialised JSON, as the TypeScript client takes it), anything else as JSON."""
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode()
    if isinstance(body, bytearray | memoryview):
        return bytes(body)
    return _encode_json(body)


Outcome = Literal["pending", "ok", "resend", "failed"]


class Batch:
    """Messages sent in one request, under one (epoch, seq) once it is started."""

    __slots__ = ("epoch", "maybe_delivered", "messages", "outcome", "seq", "settled", "size")

    def __init__(self, messages: list[bytes], size: int) -> None:
        self.messages = messages
        self.size = size
        self.epoch = -1
        self.seq = -1
        # Set when an attempt's outcome is unknown (the connection broke, a 5xx):
        # a later 204 for it may then be our own earlier attempt.
        self.maybe_delivered = False
        self.outcome: Outcome = "pending"
        self.settled: Any = None  # an asyncio.Event, made when the batch starts

    def mark_maybe_delivered(self) -> None:
        self.maybe_delivered = True

    def body(self, json_mode: bool) -> bytes:
        """The request body: a JSON array of the messages, or their bytes back to back."""
        return json_batch(self.messages) if json_mode else b"".join(self.messages)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How a batch is retried after a broken connection, a 408/429 or a 5xx.

    Retries resend the same (epoch, seq), so the server keeps the batch once
    whatever happened to earlier attempts. Delays grow exponentially with
    jitter from ``initial_delay_secs`` to ``max_delay_secs``; a batch still
    undelivered after ``give_up_after_secs`` fails (None: never gives up).
    """

    initial_delay_secs: float = 0.05
    max_delay_secs: float = 2.0
    give_up_after_secs: float | None = 120.0


class Backoff:
    """One batch's retry delays under a `RetryPolicy`."""

    def __init__(self, policy: RetryPolicy) -> None:
        self._policy = policy
        self._started = time.monotonic()
        self._attempts = 0

    def next_delay(self, problem: str) -> float:
        """The pause before the next attempt; raises DeliveryTimeoutError past the deadline."""
        policy = self._policy
        elapsed = time.monotonic() - self._started
        if policy.give_up_after_secs is not None and elapsed >= policy.give_up_after_secs:
            raise DeliveryTimeoutError(elapsed, problem)
        ceiling = min(policy.max_delay_secs, policy.initial_delay_secs * 2**self._attempts)
        self._attempts += 1
        return random.uniform(ceiling / 2, ceiling)

"""Idempotent producers: exactly-once, batched, pipelined appends (async and sync)."""

from __future__ import annotations

from durable_sessions.producer.async_producer import AsyncIdempotentProducer, CloseResult
from durable_sessions.producer.batches import RetryPolicy
from durable_sessions.producer.errors import (
    DeliveryTimeoutError,
    ProducerClosedError,
    ProducerFailedError,
    SequenceGapError,
    StaleEpochError,
    StreamClosedError,
)
from durable_sessions.producer.sync_producer import IdempotentProducer

__all__ = [
    "AsyncIdempotentProducer",
    "CloseResult",
    "DeliveryTimeoutError",
    "IdempotentProducer",
    "ProducerClosedError",
    "ProducerFailedError",
    "RetryPolicy",
    "SequenceGapError",
    "StaleEpochError",
    "StreamClosedError",
]

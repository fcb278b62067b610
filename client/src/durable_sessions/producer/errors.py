"""What a producer raises (or hands to ``on_error``); all are ``DurableStreamError``s."""

from __future__ import annotations

from durable_streams import DurableStreamError


class StaleEpochError(DurableStreamError):
    """The server holds a newer epoch for this producer id (zombie fencing), or another
    producer session already wrote this epoch's sequence numbers.

    Call ``restart()``, or create the producer with a higher epoch or with
    ``auto_claim=True``.
    """

    def __init__(self, current_epoch: int, reason: str = "") -> None:
        super().__init__(
            reason
            or f"producer epoch is stale: the server's is {current_epoch}; "
            "restart() or use a higher epoch (or auto_claim)",
            status=403,
            code="STALE_EPOCH",
        )
        self.current_epoch = current_epoch


class SequenceGapError(DurableStreamError):
    """The server expects a sequence number this producer cannot send (a protocol violation)."""

    def __init__(self, expected_seq: int, received_seq: int) -> None:
        super().__init__(
            f"producer sequence gap: expected {expected_seq}, received {received_seq}",
            status=409,
            code="SEQUENCE_GAP",
        )
        self.expected_seq = expected_seq
        self.received_seq = received_seq


class StreamClosedError(DurableStreamError):
    """The stream is closed: nothing more can be appended."""

    def __init__(self, url: str) -> None:
        super().__init__(f"stream {url} is closed", status=409, code="STREAM_CLOSED")


class ProducerClosedError(DurableStreamError):
    """``append()`` after ``close()`` or ``detach()``."""

    def __init__(self) -> None:
        super().__init__("producer is closed", code="ALREADY_CLOSED")


class ProducerFailedError(DurableStreamError):
    """``append()`` after a batch failed for good: ``restart()`` to go on (see ``__cause__``)."""

    def __init__(self) -> None:
        super().__init__(
            "a batch failed for good, so later ones cannot be sequenced: restart() to go on",
            code="PRODUCER_FAILED",
        )


class DeliveryTimeoutError(DurableStreamError):
    """A batch could not be delivered within the retry policy's time."""

    def __init__(self, seconds: float, last: str) -> None:
        super().__init__(
            f"gave up delivering a batch after {seconds:.0f}s of retries ({last})",
            code="DELIVERY_TIMEOUT",
        )

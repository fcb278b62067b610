"""Domain errors raised by stores; mapped to HTTP status once, in ``ds_server.edge.errors``."""

from __future__ import annotations


class StoreError(Exception):
    """Base of every error a store raises on purpose."""

    reason = "store error"

    def __init__(self, reason: str | None = None) -> None:
        super().__init__(reason or self.reason)
        self.reason = reason or self.reason


class StreamNotFound(StoreError):
    reason = "stream not found"


class StreamExists(StoreError):
    """Create with a configuration that differs from the existing stream's."""

    reason = "stream exists with a different configuration"


class StreamClosed(StoreError):
    """Append to a closed stream; carries the final offset for the response."""

    reason = "stream is closed"

    def __init__(self, tail: int) -> None:
        super().__init__()
        self.tail = tail


class ContentTypeMismatch(StoreError):
    """An append whose Content-Type is not the stream's; the reason names both."""

    reason = "content type does not match the stream's"

    def __init__(self, stream_type: str, sent_type: str | None) -> None:
        sent = repr(sent_type) if sent_type else "no Content-Type"
        super().__init__(f"the stream's content type is {stream_type!r}; the request sent {sent}")


class SequenceConflict(StoreError):
    """A Stream-Seq at or below the writer's last one."""

    reason = "Stream-Seq must increase"


class ProducerFenced(StoreError):
    """A producer epoch older than the stream's current one (zombie fencing)."""

    reason = "stale producer epoch"

    def __init__(self, current_epoch: int) -> None:
        super().__init__()
        self.current_epoch = current_epoch


class SequenceGap(StoreError):
    """A producer sequence number that skips ahead of the expected one."""

    reason = "producer sequence gap"

    def __init__(self, expected: int, received: int) -> None:
        super().__init__()
        self.expected = expected
        self.received = received


class InvalidProducerState(StoreError):
    """A new producer epoch that does not start at sequence 0."""

    reason = "a new producer epoch must start at Producer-Seq 0"


class PayloadTooLarge(StoreError):
    reason = "payload exceeds the configured limit"


class QuotaExceeded(StoreError):
    """A write that would take its bucket past its storage quota; nothing was written.

    ``507``: the bucket has no room *now*; deleting streams or publishing
    snapshots frees some. (A write larger than the whole quota is
    ``PayloadTooLarge``: no room will ever be enough.)
    """

    reason = "the bucket is at its storage quota"


class QuotaRefused(StoreError):
    """A shared backend refused a write its bucket's stored totals have no room for.

    The deciding process counted on stale totals: it reloads them and decides
    again, which then answers ``QuotaExceeded`` or writes. Clients never see it.
    """

    reason = "the bucket's totals changed in another process; retry"


class InvalidOffset(StoreError):
    """An offset beyond the tail or inside a message."""

    reason = "offset is not a readable position of this stream"


class OffsetGone(StoreError):
    """An offset before the earliest retained position."""

    reason = "offset is before the earliest retained data: start again from the stream's /bootstrap"


class InvalidFork(StoreError):
    """A fork request that cannot be satisfied (bad source or offset)."""

    reason = "invalid fork"


class StorageFull(StoreError):
    """The backing storage refused the write; nothing was written."""

    reason = "storage is full"


class StorageUnavailable(StoreError):
    """The storage could not be reached (a database connection lost); retry later.

    A write that fails so may or may not have been stored: producers retry
    with the same sequence number and are deduplicated.
    """

    reason = "storage is unavailable; retry"


class StreamGone(StoreError):
    """A stream deleted (or expired) while forks still read its data."""

    reason = "stream was deleted; its forks keep its data"


class BucketNotFound(StoreError):
    reason = "bucket not found"


class BucketExists(StoreError):
    reason = "bucket already exists"


class BucketNotEmpty(StoreError):
    reason = "bucket still has streams"


class SnapshotNotFound(StoreError):
    reason = "snapshot not found"


class SnapshotConflict(StoreError):
    """A snapshot beyond the tail, or deleting the latest (bootstrap needs it)."""

    reason = "snapshot conflict"


class StaleStream(StoreError):
    """A shared backend refused a write decided on an outdated state of the stream.

    Another process changed the stream first. The engine reloads the stream's
    state and decides the write again; clients never see this error.
    """

    reason = "the stream changed in another process; retry"

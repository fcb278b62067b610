"""The storage boundary: the ``Store`` ABC and the values that cross it.

Routes speak only to this interface. A storage backend does not implement
it: it implements ``stores.persistence.Persistence``, and ``LogStore``
(the shared engine) is its ``Store``. Every backend keeps the same contract:
producer validation and the append it guards are one atomic operation,
serialized per stream; offsets are cumulative payload byte positions.
"""

from __future__ import annotations

import abc
import enum
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from ds_server.live import LiveNotifier
    from ds_server.protocol.offsets import Sentinel


@dataclass(frozen=True, slots=True)
class Expiry:
    """How a stream expires: a sliding TTL in seconds, or a fixed instant."""

    ttl_seconds: int | None = None
    expires_at: float | None = None  # Unix seconds


@dataclass(frozen=True, slots=True)
class ForkSpec:
    """Create the new stream as a fork of ``source`` at ``offset`` (None: its tail).

    ``sub_offset`` moves the divergence point past ``offset`` by that many
    bytes (byte streams) or messages (JSON streams).
    """

    source: str
    offset: int | None
    sub_offset: int = 0


@dataclass(frozen=True, slots=True)
class CreateRequest:
    path: str
    # None only for forks, which then inherit the source's content type.
    content_type: str | None
    expiry: Expiry = Expiry()
    closed: bool = False
    # The initial body, already split into messages (JSON) or one chunk (bytes).
    messages: tuple[bytes, ...] = ()
    fork: ForkSpec | None = None


@dataclass(frozen=True, slots=True)
class ProducerClaim:
    """The idempotent-producer triple of an append."""

    producer_id: str
    epoch: int
    seq: int


# A plain class, not a dataclass: built on every request, and once compiled
# with mypyc a dataclass still constructs through the interpreted __init__
# that dataclasses generates (~8x slower than a compiled one). Treat as immutable.
class AppendRequest:
    __slots__ = ("close", "content_type", "messages", "path", "producer", "stream_seq", "writer")

    def __init__(
        self,
        path: str,
        # The request's Content-Type; None when the body is empty (close-only).
        content_type: str | None,
        messages: tuple[bytes, ...],
        close: bool = False,
        stream_seq: str | None = None,
        # Stream-Seq ordering is scoped per writer identity (X-JWT-Sub), "" when anonymous.
        writer: str = "",
        producer: ProducerClaim | None = None,
    ) -> None:
        self.path = path
        self.content_type = content_type
        self.messages = messages
        self.close = close
        self.stream_seq = stream_seq
        self.writer = writer
        self.producer = producer


# Not frozen: built on every request, and frozen dataclasses cost ~7x to construct.
# Treat as immutable.
@dataclass(slots=True)
class StreamInfo:
    """A stream's metadata as of one moment."""

    stream_id: str  # unique per incarnation: a re-created path gets a new id
    path: str
    content_type: str
    tail: int
    closed: bool
    expiry: Expiry
    expires_at: float | None  # when it will expire if untouched, Unix seconds
    created_at: float
    forked_from: str | None = None
    fork_offset: int | None = None
    # Reads before this offset get 410 Gone: a snapshot has replaced them.
    earliest_offset: int = 0
    snapshot: SnapshotInfo | None = None
    last_write_at: float = 0.0

    @property
    def retained_bytes(self) -> int:
        """Bytes a reader from the earliest retained offset gets: what the limits count."""
        return self.tail - self.earliest_offset


@dataclass(frozen=True, slots=True)
class SnapshotInfo:
    """A stream's visible snapshot: the folded state of ``[-1, offset)``."""

    offset: int
    content_type: str
    size: int
    created_at: float


@dataclass(frozen=True, slots=True, eq=False)
class Retention:
    """A reader's hold on a stream's data from ``start`` on (a running bootstrap).

    While held, a snapshot does not free that data, and reads with the
    hold may go on below the new earliest retained offset.
    """

    stream_id: str
    start: int
    since: float

    def holds(self, stream_id: str, start: int) -> bool:
        return stream_id == self.stream_id and start >= self.start


@dataclass(slots=True)
class BootstrapStart:
    """What a bootstrap begins with, read as one consistent view, and its hold on the data.

    The caller reads on from ``first_page`` with ``read_messages(...,
    retention=retention)`` and must ``release(retention)`` when done.
    """

    info: StreamInfo  # the stream as the bootstrap began: its tail ends the bootstrap
    snapshot: bytes  # the snapshot's blob; empty when the stream has none
    snapshot_type: str
    start: int  # where the messages after the snapshot start
    first_page: ReadResult | None  # None when there are no messages after it
    retention: Retention


@dataclass(frozen=True, slots=True)
class BucketInfo:
    bucket_id: str
    created_at: float
    stream_count: int  # live streams /ds addresses in the bucket
    # What the bucket's quota counts (``_quotas``), and the quota; None is no limit.
    used_bytes: int = 0
    used_streams: int = 0
    max_bytes: int | None = None
    max_streams: int | None = None


@dataclass(frozen=True, slots=True)
class StreamSummary:
    """One row of a bucket listing."""

    stream_id: str  # bucket-local
    closed: bool
    content_type: str
    tail: int
    created_at: float
    last_write_at: float


@dataclass(frozen=True, slots=True)
class StreamListing:
    streams: list[StreamSummary]
    has_more: bool

    @property
    def next_cursor(self) -> str | None:
        return self.streams[-1].stream_id if self.has_more and self.streams else None


class AppendOutcome(enum.Enum):
    APPENDED = "appended"
    DUPLICATE = "duplicate"  # an idempotent-producer retry; nothing was written
    CLOSED = "closed"  # a close-only request (possibly a repeat)


# A plain class for speed, as AppendRequest is. Treat as immutable.
class AppendResult:
    """What an append's answer needs: its outcome, and the stream's end as it left it."""

    __slots__ = ("closed", "outcome", "producer_epoch", "producer_seq", "tail")

    def __init__(
        self,
        outcome: AppendOutcome,
        tail: int,  # this write's end (a duplicate's: the stream's visible tail)
        closed: bool,
        # Echoed producer state: the epoch and the highest accepted seq.
        producer_epoch: int | None = None,
        producer_seq: int | None = None,
    ) -> None:
        self.outcome = outcome
        self.tail = tail
        self.closed = closed
        self.producer_epoch = producer_epoch
        self.producer_seq = producer_seq


@dataclass(frozen=True, slots=True)
class CreateResult:
    created: bool
    info: StreamInfo


# A plain class for speed, as AppendRequest is. Treat as immutable.
class ReadResult:
    __slots__ = ("chunks", "info", "next_offset", "start")

    def __init__(
        self,
        info: StreamInfo,
        start: int,
        next_offset: int,
        # Message payloads (JSON) or byte slices, in stream order.
        chunks: list[bytes] | None = None,
    ) -> None:
        self.info = info
        self.start = start
        self.next_offset = next_offset
        self.chunks = [] if chunks is None else chunks

    @property
    def up_to_date(self) -> bool:
        return self.next_offset >= self.info.tail

    @property
    def at_closed_end(self) -> bool:
        return self.info.closed and self.up_to_date


class Store(abc.ABC):
    """A durable-streams storage backend."""

    def __init__(self, live: LiveNotifier) -> None:
        self.live = live
        # Wall-clock seconds: TTLs and Expires-At are wall-clock instants.
        # Tests give the store a clock they move by hand.
        self.clock: Callable[[], float] = time.time

    async def start(self) -> None:  # noqa: B027 - optional hook
        """Open files, recover state; called once before serving."""

    async def stop(self) -> None:  # noqa: B027 - optional hook
        """Flush and release resources; called once at shutdown."""

    @abc.abstractmethod
    async def create(self, request: CreateRequest) -> CreateResult:
        """Create a stream, or confirm an identical one exists (``created=False``)."""

    @abc.abstractmethod
    async def append(self, request: AppendRequest) -> AppendResult:
        """Validate producer/sequence/closure rules and append atomically."""

    @abc.abstractmethod
    async def read(self, path: str, offset: int | Sentinel, max_bytes: int) -> ReadResult:
        """Read up to about ``max_bytes`` from ``offset``; renews a sliding TTL."""

    @abc.abstractmethod
    async def head(self, path: str) -> StreamInfo:
        """A stream's metadata; does not renew its TTL."""

    @abc.abstractmethod
    async def delete(self, path: str) -> None:
        """Delete a stream (forks keep reading the data they inherited)."""

    @abc.abstractmethod
    async def read_messages(
        self, path: str, start: int, max_bytes: int, *, retention: Retention | None = None
    ) -> ReadResult:
        """Like :meth:`read` from a message boundary, but never splits a message.

        Byte streams' messages are their appends. Bootstrap uses this so its
        parts are exactly the retained messages; with its ``retention`` it
        keeps reading even after a snapshot moved the earliest offset.
        """

    @abc.abstractmethod
    async def begin_bootstrap(self, path: str, max_bytes: int) -> BootstrapStart:
        """The snapshot and first page of a bootstrap, holding the data it still has to send.

        A snapshot published meanwhile neither cuts the bootstrap short nor
        frees what it holds, until :meth:`release`.
        """

    @abc.abstractmethod
    async def release(self, retention: Retention) -> None:
        """End a hold; space a snapshot could not free meanwhile is freed now."""

    # -- buckets (the /ds surface) -------------------------------------------

    @abc.abstractmethod
    async def create_bucket(self, bucket_id: str) -> BucketInfo:
        """Create an empty bucket; BucketExists when it is there already."""

    @abc.abstractmethod
    async def get_bucket(self, bucket_id: str) -> BucketInfo:
        """A bucket's metadata; BucketNotFound when it does not exist."""

    @abc.abstractmethod
    async def delete_bucket(self, bucket_id: str) -> None:
        """Delete an empty bucket; BucketNotFound, or BucketNotEmpty."""

    @abc.abstractmethod
    async def list_bucket_streams(
        self, bucket_id: str, *, prefix: str, after: str | None, limit: int
    ) -> StreamListing:
        """Streams ``{bucket}/{id}`` sorted by id, ``id > after``, starting with ``prefix``."""

    # -- snapshots -----------------------------------------------------------

    @abc.abstractmethod
    async def publish_snapshot(
        self, path: str, offset: int, content_type: str, data: bytes
    ) -> SnapshotInfo:
        """Store a snapshot at a message boundary; it becomes the earliest retained offset."""

    @abc.abstractmethod
    async def read_snapshot(self, path: str, offset: int) -> tuple[SnapshotInfo, bytes]:
        """The visible snapshot at ``offset``; SnapshotNotFound otherwise."""

    @abc.abstractmethod
    async def delete_snapshot(self, path: str, offset: int) -> None:
        """SnapshotNotFound for an unknown or superseded one; the latest is protected (409)."""

"""The record of one append that the engine hands a persistence to make durable."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ds_server.stores._quotas import Usage
    from ds_server.stores.base import ProducerClaim


class AppendCommit:
    """Everything one append changes, to be made durable together.

    A plain class for speed, as ``base.AppendRequest`` is, and in a module of
    its own so it is compiled while ``_persistence`` (whose ``Persistence``
    plain-Python backends subclass) is not. Treat as immutable.
    """

    __slots__ = (
        "close",
        "last_access",
        "messages",
        "producer",
        "size",
        "start",
        "stream_id",
        "stream_seq",
        "usage",
        "version",
        "writer",
    )

    def __init__(
        self,
        stream_id: str,
        start: int,  # stream offset of the first message
        messages: tuple[bytes, ...],
        size: int,  # bytes in messages
        producer: ProducerClaim | None,
        writer: str,
        stream_seq: str | None,
        close: bool,
        last_access: float,
        # The stream's state version once this commit is applied. A backend
        # shared by several processes stores the commit only if its stored
        # version is ``version - 1`` (else ``StaleStream``): the decision was
        # taken on the latest state.
        version: int = 0,
        # The bucket totals the append counts in, charged already; a shared
        # backend checks the stored totals of its bucket against its quota.
        usage: Usage | None = None,
    ) -> None:
        self.stream_id = stream_id
        self.start = start
        self.messages = messages
        self.size = size
        self.producer = producer
        self.writer = writer
        self.stream_seq = stream_seq
        self.close = close
        self.last_access = last_access
        self.version = version
        self.usage = usage

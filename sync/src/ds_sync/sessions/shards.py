"""Which shard a session stream belongs to: a stable hash of its path, the same in every process."""

from __future__ import annotations

import zlib
from typing import Protocol


def shard_of(path: str, shards: int) -> int:
    """The stream's shard, ``0 .. shards - 1`` (CRC-32 of the path: stable across processes
    and versions, unlike ``hash()``)."""
    return zlib.crc32(path.encode("utf-8")) % shards


class Ownership(Protocol):
    """Which streams this process reads and commits (``ShardLeases``, or ``AllStreams``)."""

    shards: int

    def owns(self, path: str) -> bool: ...

    def shared(self) -> bool:
        """Whether other live processes share the work now."""
        ...


class AllStreams:
    """No group (``DS_SYNC__SHARDS=0``): this process syncs every stream."""

    shards = 1

    def owns(self, path: str) -> bool:
        return True

    def shared(self) -> bool:
        return False

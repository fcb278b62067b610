"""Per-bucket storage quotas: the limits, and the running totals writes are checked against.

A stream counts against the bucket its path's first segment names: the
bucket authorization reads (``/v1/stream/chat/x`` and ``/ds/chat/x`` alike),
whether or not it was created on /ds. Server streams (``__ds/...``) count
against none. A bucket's usage is

- ``bytes``: what its streams retain (tail minus earliest retained offset,
  the per-stream limit's measure: a fork counts what it can read) plus their
  snapshots' blobs;
- ``streams``: how many streams it stores.

A stream counts until it is purged: a deleted stream whose forks still read
its data keeps its bytes stored, so it keeps counting until its last fork is
gone. The totals are updated with every write, in O(1), in the same step as
the write: the engine keeps them for backends one process owns (rebuilt from
the stream states when the store opens), and a backend several processes
share keeps them itself, checked in the write's own transaction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ds_server.stores.errors import PayloadTooLarge, QuotaExceeded

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ds_server.settings import QuotasSection, Settings
    from ds_server.stores._rules import StreamState


def bucket_of(path: str) -> str | None:
    """The bucket a stream at ``path`` counts against; None for server streams."""
    bucket = path.partition("/")[0]
    return None if bucket.startswith("__") else bucket


@dataclass(frozen=True, slots=True)
class Quota:
    """What one bucket may hold; None is no limit."""

    max_bytes: int | None = None
    max_streams: int | None = None


@dataclass(frozen=True, slots=True)
class QuotaPolicy:
    """Every bucket's quota: ``default``, unless ``buckets`` names the bucket."""

    default: Quota = Quota()
    # A builtin type: the compiled build resolves dataclass annotations at import.
    buckets: dict[str, Quota] = field(default_factory=dict)

    def quota_of(self, bucket: str) -> Quota:
        return self.buckets.get(bucket, self.default)


NO_QUOTAS = QuotaPolicy()


def _limit(value: int | None, default: int | None) -> int | None:
    """A setting's limit: None inherits ``default``; 0 is no limit."""
    if value is None:
        return default
    return value or None


def policy_of(section: QuotasSection) -> QuotaPolicy:
    """The quotas ``DS_QUOTAS__*`` set."""
    default = Quota(max_bytes=section.max_bytes or None, max_streams=section.max_streams or None)
    buckets = {
        name: Quota(
            max_bytes=_limit(quota.max_bytes, default.max_bytes),
            max_streams=_limit(quota.max_streams, default.max_streams),
        )
        for name, quota in section.buckets.items()
    }
    return QuotaPolicy(default, buckets)


def quota_policy(settings: Settings) -> QuotaPolicy:
    """The quotas of the server ``settings`` configure."""
    return policy_of(settings.quotas)


def stored_bytes(state: StreamState) -> int:
    """What a stream counts against its bucket's byte quota."""
    snapshot = state.snapshot
    return state.tail - state.earliest_offset + (snapshot.size if snapshot is not None else 0)


# A plain class for speed: charged on every append. Treat ``bucket`` and ``quota`` as fixed.
class Usage:
    """A bucket's running totals, and the check of a write against its quota."""

    __slots__ = ("bucket", "bytes", "quota", "streams")

    def __init__(self, bucket: str, quota: Quota, size: int = 0, streams: int = 0) -> None:
        self.bucket = bucket
        self.quota = quota
        self.bytes = size
        self.streams = streams

    def charge(self, size: int, streams: int = 0) -> None:
        """Count ``size`` more bytes (and ``streams`` more streams), or raise; O(1).

        Nothing is counted when it raises. Only growth is checked: a write
        that frees room, or adds nothing, passes even over the quota.
        """
        quota = self.quota
        limit = quota.max_bytes
        if limit is not None and size > 0 and self.bytes + size > limit:
            if size > limit:
                raise PayloadTooLarge(
                    f"this write of {size} bytes is larger than bucket {self.bucket!r}'s whole "
                    f"storage quota of {limit} bytes"
                )
            raise QuotaExceeded(
                f"bucket {self.bucket!r} is at its storage quota: {self.bytes} of {limit} bytes "
                f"used, this write needs {size} more; delete streams or publish snapshots "
                "to free room"
            )
        cap = quota.max_streams
        if cap is not None and streams > 0 and self.streams + streams > cap:
            raise QuotaExceeded(
                f"bucket {self.bucket!r} is at its stream quota of {cap} streams; "
                "delete streams to make room"
            )
        self.bytes += size
        self.streams += streams

    def refund(self, size: int, streams: int = 0) -> None:
        """Uncount what :meth:`charge` counted (a write failed, or data was removed)."""
        self.bytes -= size
        self.streams -= streams


class Ledger:
    """The usage of every bucket of one store, by bucket."""

    def __init__(self, policy: QuotaPolicy) -> None:
        self.policy = policy
        self.usage: dict[str, Usage] = {}

    def of(self, path: str) -> Usage | None:
        """The usage the stream at ``path`` counts in (made on first use); None if none."""
        bucket = bucket_of(path)
        if bucket is None:
            return None
        usage = self.usage.get(bucket)
        if usage is None:
            usage = self.usage[bucket] = Usage(bucket, self.policy.quota_of(bucket))
        return usage

    def count(self, states: Iterable[StreamState]) -> None:
        """Start over from the stored streams (when the store opens): O(streams), once."""
        self.usage.clear()
        for state in states:
            usage = self.of(state.path)
            if usage is not None:
                usage.bytes += stored_bytes(state)
                usage.streams += 1

    def drop_if_empty(self, usage: Usage) -> None:
        """Forget a bucket's totals once it stores nothing (so unused names cost nothing)."""
        if usage.streams == 0 and usage.bytes == 0 and self.usage.get(usage.bucket) is usage:
            del self.usage[usage.bucket]

    def set(self, bucket: str, size: int, streams: int) -> Usage:
        """Take a bucket's totals as another owner of them reports them (shared backends)."""
        usage = self.usage.get(bucket)
        if usage is None:
            usage = self.usage[bucket] = Usage(bucket, self.policy.quota_of(bucket))
        usage.bytes, usage.streams = size, streams
        return usage

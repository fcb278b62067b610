"""Planning a read: which streams, and which slice of each one a partition reads.

A stream is one partition, unless more than ``split_bytes`` of it is to be
read: then it is cut at message boundaries about ``split_bytes`` apart.
The server tells where messages end only at the end of a read, so the
boundaries are found by walking the stream one read at a time while
reading only each response's headers (``StreamServer.next_boundary`` of the SDK).
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ds_spark.errors import StreamError
from ds_spark.sources.options import BOOTSTRAP, EARLIEST

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from durable_sessions.protocol.listing import StreamInfo
    from durable_sessions.server import StreamServer

    from ds_spark.sources.options import SourceOptions, Start

log = logging.getLogger("ds_spark")
# Named streams already reported missing: a streaming query discovers every batch.
_reported_missing: set[str] = set()


@dataclass(frozen=True, slots=True)
class StreamSlice:
    """What one partition reads: messages of ``path`` from ``start`` up to ``end``.

    ``start`` None reads the stream's /bootstrap (which starts at its
    snapshot); ``with_snapshot`` emits the snapshot as the first row (from
    the bootstrap, or the one published at ``start``).
    """

    path: str
    start: int | None
    end: int
    with_snapshot: bool


def discover(api: StreamServer, options: SourceOptions) -> list[StreamInfo]:
    """Every JSON stream the patterns name, sorted by path; a non-JSON one is an error.

    A named stream that does not exist is skipped, said once per process (as
    ds-sync does): the default patterns name ``session-events``, which only
    deployments running the heartbeat producer have.
    """
    found: dict[str, StreamInfo] = {}
    for pattern in options.patterns:
        infos = api.find(pattern)
        if pattern.literal and not infos and pattern.text not in _reported_missing:
            _reported_missing.add(pattern.text)
            log.info("stream %s does not exist; skipped", pattern.text)
        found.update((info.path, info) for info in infos)
    if options.only_ended:
        found = {path: info for path, info in found.items() if path in options.ends}
    for info in found.values():
        if not info.is_json:
            raise StreamError(
                f"stream {info.path} holds {info.content_type or 'untyped'} data, not JSON "
                "session events; narrow the stream patterns to leave it out"
            )
    return [found[path] for path in sorted(found)]


def plan_slices(
    api: StreamServer,
    streams: Iterable[StreamInfo],
    options: SourceOptions,
    ends: Mapping[str, int] | None = None,
) -> list[StreamSlice]:
    """The slices that read each stream from its start to its end (its tail by default)."""
    slices: list[StreamSlice] = []
    for info in streams:
        end = (ends or {}).get(info.path, options.ends.get(info.path, info.tail))
        slices += plan_stream(api, info.path, options.start_of(info.path), end, options.split_bytes)
    return slices


def plan_stream(
    api: StreamServer, path: str, start: Start, end: int, split_bytes: int
) -> list[StreamSlice]:
    """The slices of ``path`` from ``start`` up to ``end``."""
    if start.mode in (BOOTSTRAP, EARLIEST):
        with_snapshot = start.mode == BOOTSTRAP
        if end <= split_bytes:
            # Small enough for one read of the bootstrap (retained bytes <= end).
            return [StreamSlice(path, None, end, with_snapshot)] if end > 0 else []
        head = api.head(path)
        if head is None:
            raise StreamError(f"stream {path} does not exist")
        first = head.snapshot_offset or 0
        with_snapshot = with_snapshot and head.snapshot_offset is not None
    else:
        first, with_snapshot = start.position, False
    if first >= end and not with_snapshot:
        return []
    cuts = split_points(api, path, first, end, split_bytes)
    edges = [first, *cuts, end]
    return [
        StreamSlice(path, low, high, with_snapshot and index == 0)
        for index, (low, high) in enumerate(itertools.pairwise(edges))
    ]


def split_points(api: StreamServer, path: str, start: int, end: int, split_bytes: int) -> list[int]:
    """Message boundaries strictly inside (start, end), about ``split_bytes`` apart."""
    cuts: list[int] = []
    if end - start <= split_bytes:
        return cuts
    position, target = start, start + split_bytes
    while True:
        boundary = api.next_boundary(path, position)
        if boundary <= position or boundary >= end or end - boundary < split_bytes // 4:
            # The end of the data, or a last piece too small to be worth a task of its own.
            return cuts
        if boundary >= target:
            cuts.append(boundary)
            target = boundary + split_bytes
        position = boundary

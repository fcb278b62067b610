"""Where a fork diverges from its source (the effective fork offset)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ds_server.stores.errors import InvalidFork

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from ds_server.stores._rules import StreamState
    from ds_server.stores.base import ForkSpec


def resolve_fork_offset(
    fork: ForkSpec,
    source: StreamState,
    is_boundary: Callable[[int], bool],
    chunks_from: Callable[[int], Iterator[tuple[int, bytes]]],
) -> int:
    """The source position the fork diverges at.

    The anchor is ``fork.offset`` (default: the source's tail); it must be a
    readable position of the source, and a message boundary for JSON. A
    sub-offset then moves past it by bytes within the next append (byte
    streams) or by whole messages (JSON).
    """
    anchor = source.tail if fork.offset is None else fork.offset
    if anchor > source.tail:
        raise InvalidFork("fork offset is beyond the source's tail")
    if source.is_json and not is_boundary(anchor):
        raise InvalidFork("fork offset is inside a JSON message")
    if fork.sub_offset == 0:
        return anchor
    chunks = chunks_from(anchor)
    if source.is_json:
        for count, (chunk_start, chunk) in enumerate(chunks, start=1):
            if count == fork.sub_offset:
                return chunk_start + len(chunk)
        raise InvalidFork("sub-offset is past the messages after the fork offset")
    first = next(chunks, None)
    if first is None or fork.sub_offset > len(first[1]):
        raise InvalidFork("sub-offset is past the append at the fork offset")
    return anchor + fork.sub_offset

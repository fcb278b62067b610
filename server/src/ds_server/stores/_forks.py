"""Where a fork diverges from its source (the effective fork offset)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ds_server.stores.errors import InvalidFork

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from ds_server.stores._rules import StreamState
    from ds_server.stores.base import ForkSpec
    from ds_server.stores.persistence import Chunk


async def resolve_fork_offset(
    fork: ForkSpec,
    source: StreamState,
    tail: int,
    is_boundary: Callable[[int], Awaitable[bool]],
    chunks_from: Callable[[int, int], Awaitable[list[Chunk]]],
) -> int:
    """The source position the fork diverges at.

    The anchor is ``fork.offset`` (default: the source's ``tail``); it must be
    a readable position of the source, and a message boundary for JSON. A
    sub-offset then moves past it by bytes within the append at the anchor
    (byte streams) or by whole messages (JSON). ``chunks_from(position, n)``
    returns at least ``n`` chunks from ``position`` (fewer at the tail);
    byte chunks are cut at ``n`` bytes.
    """
    anchor = tail if fork.offset is None else fork.offset
    if anchor > tail:
        raise InvalidFork("fork offset is beyond the source's tail")
    if source.is_json and not await is_boundary(anchor):
        raise InvalidFork("fork offset is inside a JSON message")
    sub = fork.sub_offset
    if sub == 0:
        return anchor
    chunks = await chunks_from(anchor, sub)
    if source.is_json:
        if len(chunks) < sub:
            raise InvalidFork("sub-offset is past the messages after the fork offset")
        last = chunks[sub - 1]
        return last.start + len(last.data)
    if not chunks or len(chunks[0].data) < sub:
        raise InvalidFork("sub-offset is past the append at the fork offset")
    return anchor + sub

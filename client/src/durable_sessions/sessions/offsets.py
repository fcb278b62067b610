"""Where each message of a read starts and ends.

A read says where it ends (``Stream-Next-Offset``) and the reader knows
where it started; this stack's offsets are cumulative byte positions that
clients may subtract (extensions §2.1), and each JSON message is read back
as the exact bytes stored, so the boundaries in between are sums. When the
arithmetic does not hold (offsets of another form), the messages get None,
except the last, which ends where the read ends.
"""

from __future__ import annotations

from durable_sessions.protocol.offsets import OffsetError, format_offset, parse_offset


def message_offsets(
    start: str | None, messages: list[bytes], end: str | None
) -> list[tuple[str | None, str | None]]:
    """(start, end) offsets of each message of a read from ``start`` to ``end``."""
    if not messages:
        return []
    try:
        if start is None or end is None:
            raise OffsetError("unknown")
        position = parse_offset(start)
        bounds: list[tuple[str | None, str | None]] = []
        for raw in messages:
            after = position + len(raw)
            bounds.append((format_offset(position), format_offset(after)))
            position = after
        if position != parse_offset(end):
            raise OffsetError("the messages do not add up to the read")
        return bounds
    except OffsetError:
        unknown: list[tuple[str | None, str | None]] = [(None, None)] * (len(messages) - 1)
        return [*unknown, (None, end)]

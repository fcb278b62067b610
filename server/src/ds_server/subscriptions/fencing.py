"""The wake protocol's checks, as pure functions.

A wake is addressed by (token, wake_id, generation); anything that does not
name the outstanding wake exactly is FENCED, which is how a worker whose lease
expired learns it lost the work. Acks only move forward and never past data
that exists.
"""

from __future__ import annotations

import hmac
from typing import TYPE_CHECKING

from ds_server.protocol.offsets import InvalidOffsetError, parse_position
from ds_server.subscriptions.errors import Fenced, InvalidAckOffset

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from ds_server.subscriptions.model import Link, StreamState, Wake


def check_fence(
    wake: Wake | None, *, token: str, token_generation: int, wake_id: str, generation: int
) -> Wake:
    """The outstanding wake when the request names it exactly; Fenced otherwise."""
    if (
        wake is None
        or wake.token is None
        or not hmac.compare_digest(token.encode(), wake.token.encode())
        or token_generation != wake.generation
        or generation != wake.generation
        or wake_id != wake.wake_id
    ):
        raise Fenced()
    return wake


def validate_acks(
    acks: Iterable[tuple[str, str]],
    links: Mapping[str, Link],
    tails: Mapping[str, int | None],
) -> dict[str, int]:
    """New ack positions by path; InvalidAckOffset if any ack is not acceptable.

    All acks are checked before any is applied, so a bad one changes nothing.
    """
    accepted: dict[str, int] = {}
    for path, offset in acks:
        link = links.get(path)
        if link is None:
            raise InvalidAckOffset(f"{path!r} is not linked to this subscription")
        try:
            position = parse_position(offset)
        except InvalidOffsetError:
            raise InvalidAckOffset(f"ack offset for {path!r} must be a 20-digit offset") from None
        if position < link.acked:
            raise InvalidAckOffset(f"ack for {path!r} is behind its acknowledged offset")
        tail = tails.get(path)
        if tail is None or position > tail:
            raise InvalidAckOffset(f"ack for {path!r} is beyond the stream's tail")
        accepted[path] = max(position, accepted.get(path, position))
    return accepted


def apply_acks(links: Mapping[str, Link], positions: Mapping[str, int]) -> list[str]:
    """Move ack positions forward (never back); the paths that moved."""
    moved = []
    for path, position in positions.items():
        link = links.get(path)
        if link is not None and position > link.acked:
            link.acked = position
            moved.append(path)
    return moved


def pending(states: Iterable[StreamState]) -> list[StreamState]:
    """The streams with data past their ack position."""
    return [state for state in states if state.has_pending]


def pick_trigger(states: Iterable[StreamState], preferred: str | None) -> str:
    """The stream a wake names: ``preferred`` if it is pending, else the first pending one."""
    waiting = pending(states)
    if any(state.path == preferred for state in waiting) and preferred is not None:
        return preferred
    return waiting[0].path

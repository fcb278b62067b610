"""Pull-wake subscriptions (extensions §4): a claim's grant, the bodies that settle it,
and the ``code`` of the server's error answers.

A worker claims a subscription's pending work (``POST .../claim``); the
grant names the wake, its generation, a token that authorises settling it,
and each stream with its tail and what was acknowledged so far. Settling is
an ack (``done`` ends the wake; an ack of nothing that is not done renews
the lease) or a release (the server announces the wake again).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from durable_sessions.protocol.offsets import BEGINNING

if TYPE_CHECKING:
    from collections.abc import Iterable

ALREADY_CLAIMED = "ALREADY_CLAIMED"
"""Refusal code of a claim: another worker holds the subscription's lease."""
NO_PENDING_WORK = "NO_PENDING_WORK"
"""Refusal code of a claim: nothing is pending, so there is nothing to hold."""


class ClaimedStream(msgspec.Struct):
    """One stream of a grant: its tail when claimed, and the offset acknowledged so far."""

    path: str
    tail_offset: str
    acked_offset: str = BEGINNING


class Grant(msgspec.Struct):
    """A claimed wake: who the worker is to the server until it settles, and what's pending."""

    wake_id: str
    generation: int
    token: str
    """The bearer token that settles this wake (acks, renewals, the release)."""
    streams: list[ClaimedStream]


_grant = msgspec.json.Decoder(Grant)
_any = msgspec.json.Decoder()


def parse_grant(body: bytes) -> Grant:
    """A claim's ``200`` body."""
    return _grant.decode(body)


def claim_body(worker: str) -> bytes:
    """The body of a claim by ``worker`` (a name the server shows as the holder)."""
    return msgspec.json.encode({"worker": worker})


def ack_body(grant: Grant, acks: Iterable[tuple[str, str]], *, done: bool = True) -> bytes:
    """An ack of ``(stream path, offset)`` pairs; ``done`` ends the wake, else it renews
    the lease."""
    return msgspec.json.encode(
        {
            "wake_id": grant.wake_id,
            "generation": grant.generation,
            "acks": [{"stream": path, "offset": offset} for path, offset in acks],
            "done": done,
        }
    )


def renew_body(grant: Grant) -> bytes:
    """An ack of nothing that keeps the wake: it extends the claim's lease."""
    return msgspec.json.encode(
        {"wake_id": grant.wake_id, "generation": grant.generation, "done": False}
    )


def release_body(grant: Grant) -> bytes:
    """A release: the wake goes back unacknowledged."""
    return msgspec.json.encode({"wake_id": grant.wake_id, "generation": grant.generation})


def error_code(body: bytes | str) -> str | None:
    """The ``error.code`` of an error answer (``{"error": {"code": ..., ...}}``), or None."""
    try:
        document = _any.decode(body)
    except msgspec.DecodeError:
        return None
    error = document.get("error") if isinstance(document, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, str) else None

"""Session events to append, in the contract's shape (sessions.md §2).

Every event is a State Protocol change message: ``{"type", "key", "value",
"headers": {"operation", "timestamp"}}``. New messages are ``insert``s,
everything else that stores a value an ``update`` (both upserts for every
reader), removals ``delete``s, and a streamed reply's pieces ``chunk``
events with the operation ``append``. ``timestamp`` is the writer's clock
(UTC, milliseconds). Presence and typing carry ``expires_at``
(`durable_sessions.sessions.liveness`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from durable_sessions.sessions.keys import message_key, reaction_key, user_key
from durable_sessions.sessions.liveness import (
    EXPIRES_AT,
    PRESENCE_TTL,
    TYPING_TTL,
    deadline,
)
from durable_sessions.sessions.timestamps import format_time, utc_now

if TYPE_CHECKING:
    from datetime import datetime, timedelta

Role: TypeAlias = Literal["user", "assistant", "system", "tool"]
Status: TypeAlias = Literal["online", "away", "offline"]
ROLES = ("user", "assistant", "system", "tool")
STATUSES = ("online", "away", "offline")


def change_event(
    type: str, key: str, operation: str, value: Any = None, *, at: datetime | None = None
) -> dict[str, Any]:
    """Any session event: a change message with the writer's timestamp."""
    event: dict[str, Any] = {"type": type, "key": key}
    if operation != "delete":
        event["value"] = value
    event["headers"] = {"operation": operation, "timestamp": format_time(at or utc_now())}
    return event


def message_event(
    message_id: str,
    text: str,
    *,
    role: Role,
    author: str,
    edit: bool = False,
    at: datetime | None = None,
) -> dict[str, Any]:
    """A message (``insert``), or a new version of one (``edit=True``: ``update``)."""
    if role not in ROLES:
        raise ValueError(f"a role is one of {', '.join(ROLES)}, not {role!r}")
    value = {"role": role, "text": text, "author": author}
    operation = "update" if edit else "insert"
    return change_event("message", message_key(message_id), operation, value, at=at)


def chunk_event(
    message_id: str, text: str, index: int, *, role: Role = "assistant", at: datetime | None = None
) -> dict[str, Any]:
    """One piece of a streamed reply (``append``); folded in order they make its text."""
    value = {"role": role, "text": text, "index": index}
    return change_event("chunk", message_key(message_id), "append", value, at=at)


def presence_event(
    user: str,
    status: Status = "online",
    *,
    ttl: timedelta = PRESENCE_TTL,
    at: datetime | None = None,
) -> dict[str, Any]:
    """``user``'s presence; online and away expire ``ttl`` after ``at`` unless refreshed."""
    if status not in STATUSES:
        raise ValueError(f"a status is one of {', '.join(STATUSES)}, not {status!r}")
    now = at or utc_now()
    value: dict[str, Any] = {"status": status}
    if status != "offline":
        value[EXPIRES_AT] = deadline(now, ttl)
    return change_event("presence", user_key(user), "update", value, at=now)


def typing_event(
    user: str, *, ttl: timedelta = TYPING_TTL, at: datetime | None = None
) -> dict[str, Any]:
    """``user`` is typing, until ``ttl`` after ``at`` unless refreshed."""
    now = at or utc_now()
    value = {EXPIRES_AT: deadline(now, ttl)}
    return change_event("typing", user_key(user), "update", value, at=now)


def stopped_typing_event(user: str, *, at: datetime | None = None) -> dict[str, Any]:
    """``user`` stopped typing."""
    return change_event("typing", user_key(user), "delete", at=at)


def reaction_event(
    message_id: str, user: str, emoji: str, *, remove: bool = False, at: datetime | None = None
) -> dict[str, Any]:
    """``user`` reacted to a message with ``emoji`` (``remove=True``: took it back)."""
    key = reaction_key(message_id, user, emoji)
    if remove:
        return change_event("reaction", key, "delete", at=at)
    return change_event("reaction", key, "update", {"emoji": emoji}, at=at)


def deleted_message_event(message_id: str, *, at: datetime | None = None) -> dict[str, Any]:
    """A message removed."""
    return change_event("message", message_key(message_id), "delete", at=at)

"""Session events as read: each stream message as a typed value (sessions.md §2).

`parse_event` reads either accepted shape. Known types become their class
(`MessageEvent`, `ChunkEvent`, `PresenceEvent`, `TypingEvent`,
`ReactionEvent`); anything else, control messages and messages that are
not session events included, is a plain `SessionEvent`, so nothing read is
dropped. Stream content is untrusted: fields of the wrong type read as None
(or ``""`` for text), never as an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from durable_sessions.sessions.fields import DELETE, fields_of
from durable_sessions.sessions.keys import message_id_of, parse_reaction_key, user_of
from durable_sessions.sessions.liveness import expires_at

if TYPE_CHECKING:
    from datetime import datetime

    from durable_sessions.sessions.fields import Kind


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionEvent:
    """One message of a session stream, with its §2 fields.

    ``offset`` is where the message starts in the stream and ``next_offset``
    where it ends (a read from ``next_offset`` starts after it; a fork at
    ``offset`` keeps everything before it). Both are None when unknown.
    ``message`` is the decoded message itself.
    """

    type: str | None
    key: str | None
    operation: str | None
    kind: Kind | None
    value: Any
    time: datetime | None
    offset: str | None
    next_offset: str | None
    message: Any

    @property
    def deleted(self) -> bool:
        """Whether the event removes its (type, key)."""
        return self.kind == DELETE


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageEvent(SessionEvent):
    """A message written, edited (another upsert) or deleted."""

    message_id: str
    role: str | None
    text: str
    author: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ChunkEvent(SessionEvent):
    """A piece of a streamed reply to message ``message_id``."""

    message_id: str
    role: str | None
    text: str
    index: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class PresenceEvent(SessionEvent):
    """A user's presence set (``status``; None when the value has none) or removed."""

    user: str
    status: str | None
    expires_at: datetime | None


@dataclass(frozen=True, slots=True, kw_only=True)
class TypingEvent(SessionEvent):
    """A user started (or is still) typing, or stopped (``deleted``)."""

    user: str
    expires_at: datetime | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ReactionEvent(SessionEvent):
    """A reaction added or removed (``deleted``)."""

    message_id: str
    user: str
    emoji: str


def parse_event(
    message: Any, *, offset: str | None = None, next_offset: str | None = None
) -> SessionEvent:
    """The typed event of one decoded stream message."""
    fields = fields_of(message)
    value = message.get("value") if isinstance(message, dict) else None
    common: dict[str, Any] = {
        "type": fields.type,
        "key": fields.key,
        "operation": fields.operation,
        "kind": fields.kind,
        "value": value,
        "time": fields.time,
        "offset": offset,
        "next_offset": next_offset,
        "message": message,
    }
    key = fields.key
    if key is None:
        return SessionEvent(**common)
    body = value if isinstance(value, dict) else {}
    if fields.type == "message":
        return MessageEvent(
            **common,
            message_id=message_id_of(key),
            role=_string(body.get("role")),
            text=_text(body.get("text")),
            author=_string(body.get("author")),
        )
    if fields.type == "chunk":
        index = body.get("index")
        return ChunkEvent(
            **common,
            message_id=message_id_of(key),
            role=_string(body.get("role")),
            text=_text(body.get("text")),
            index=index if isinstance(index, int) and not isinstance(index, bool) else None,
        )
    if fields.type == "presence":
        return PresenceEvent(
            **common,
            user=user_of(key),
            status=_string(body.get("status")),
            expires_at=expires_at(value),
        )
    if fields.type == "typing":
        return TypingEvent(**common, user=user_of(key), expires_at=expires_at(value))
    if fields.type == "reaction":
        reaction = parse_reaction_key(key, value)
        if reaction is not None:
            return ReactionEvent(
                **common,
                message_id=reaction.message_id,
                user=reaction.user,
                emoji=reaction.emoji,
            )
    return SessionEvent(**common)


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""

"""``SessionState``: a session folded (§6), and read as a chat: messages, who is online, who types.

The fold itself is `durable_sessions.sessions.fold`; this class keeps its
result (`to_dict`, which is what a snapshot holds) and, beside it, what a
reader wants that the fold drops: where each message started in the stream
(to fork before it), whether a reply is still streaming, whether a message
was edited. Presence and typing are read through the expiry rule of
`durable_sessions.sessions.liveness` at the time asked for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from durable_sessions.sessions.events import SessionEvent, parse_event
from durable_sessions.sessions.fold import fold, snapshot_document, state_of_snapshot
from durable_sessions.sessions.keys import message_id_of, parse_reaction_key, user_of
from durable_sessions.sessions.liveness import expires_at, is_expired
from durable_sessions.sessions.timestamps import utc_now

if TYPE_CHECKING:
    from datetime import datetime

    from durable_sessions.sessions.fold import State


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """A message as the session shows it now.

    ``streaming``: the last thing it got was a chunk (its final message has
    not come yet). ``offset``: where its first event starts in the stream,
    None when it came from a snapshot; fork the session there to rewrite it.
    ``reactions``: emoji → users, in the order they first reacted.
    """

    id: str
    key: str
    role: str | None
    text: str
    author: str | None
    streaming: bool
    edited: bool
    time: datetime | None
    offset: str | None
    reactions: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Participant:
    """A user's presence: ``online`` unless its status is ``offline``, it was removed
    (then it is not listed at all) or its ``expires_at`` has passed (``expired``)."""

    user: str
    status: str | None
    online: bool
    expired: bool
    expires_at: datetime | None


@dataclass(slots=True)
class _MessageMeta:
    offset: str | None
    time: datetime | None
    upserts: int = 0
    streaming: bool = False


class SessionState:
    """A session's state, built by applying its messages in stream order."""

    def __init__(self) -> None:
        self._data: State = {}
        self._meta: dict[str, _MessageMeta] = {}
        self.offset: str | None = None
        """Where the state is folded up to (the offset after the last message applied)."""

    # -- building ------------------------------------------------------------

    def apply(
        self, message: Any, *, offset: str | None = None, next_offset: str | None = None
    ) -> SessionEvent:
        """Fold one decoded message in; its typed event is returned."""
        event = parse_event(message, offset=offset, next_offset=next_offset)
        self.apply_event(event)
        return event

    def apply_event(self, event: SessionEvent) -> None:
        """Fold an event read with `parse_event`."""
        key = event.key
        # A message first seen in a snapshot has no known start.
        known = key is not None and key in self._data.get("message", {})
        fold(self._data, event.message)
        if event.next_offset is not None:
            self.offset = event.next_offset
        if key is None:
            return
        if event.type == "message" and event.kind == "delete":
            self._meta.pop(key, None)
        elif event.type == "message" and event.kind == "upsert":
            self._touch(event, streaming=False, known=known)
        elif (
            event.type == "chunk"
            and event.kind == "append"
            # A chunk onto a non-object entry changes nothing (§6).
            and isinstance(self._data.get("message", {}).get(key), dict)
        ):
            self._touch(event, streaming=True, known=known)

    def _touch(self, event: SessionEvent, *, streaming: bool, known: bool) -> None:
        assert event.key is not None
        meta = self._meta.get(event.key)
        if meta is None:
            start = None if known else event.offset
            meta = self._meta[event.key] = _MessageMeta(offset=start, time=event.time)
        if not streaming:
            meta.upserts += 1
        meta.streaming = streaming
        if meta.time is None:
            meta.time = event.time

    def load_snapshot(self, document: Any) -> None:
        """Start over from a ``ds-session-state/1`` snapshot (decoded JSON)."""
        self._data = state_of_snapshot(document)
        self._meta = {}
        offset = document.get("offset") if isinstance(document, dict) else None
        self.offset = offset if isinstance(offset, str) else None

    def clear(self) -> None:
        """Drop everything."""
        self._data, self._meta, self.offset = {}, {}, None

    # -- reading -------------------------------------------------------------

    def to_dict(self) -> State:
        """The folded state, ``{type: {key: value}}`` (copies of the maps)."""
        return {kind: dict(entries) for kind, entries in self._data.items()}

    def snapshot(self) -> dict[str, Any]:
        """The state as a §6 snapshot document, at `offset`."""
        if self.offset is None:
            raise ValueError("the state has no offset yet: apply messages with their offsets")
        return snapshot_document(self.to_dict(), self.offset)

    def get(self, type: str, key: str) -> Any:
        """The value at (``type``, ``key``), None when there is none."""
        return self._data.get(type, {}).get(key)

    def messages(self) -> list[ChatMessage]:
        """The messages, in the order they first appeared, with their whole text."""
        reactions = self.reactions()
        shown: list[ChatMessage] = []
        for key, value in self._data.get("message", {}).items():
            body = value if isinstance(value, dict) else {}
            meta = self._meta.get(key) or _MessageMeta(offset=None, time=None)
            text = body.get("text")
            message_id = message_id_of(key)
            shown.append(
                ChatMessage(
                    id=message_id,
                    key=key,
                    role=_string(body.get("role")),
                    text=text if isinstance(text, str) else "",
                    author=_string(body.get("author")),
                    streaming=meta.streaming,
                    edited=meta.upserts > 1,
                    time=meta.time,
                    offset=meta.offset,
                    reactions=reactions.get(message_id, {}),
                )
            )
        return shown

    def message(self, message_id: str) -> ChatMessage | None:
        """One message by id, None when there is none."""
        return next((m for m in self.messages() if m.id == message_id), None)

    def presence(self, now: datetime | None = None) -> list[Participant]:
        """Everyone with a presence entry, online first, then by name."""
        at = now or utc_now()
        people = []
        for key, value in self._data.get("presence", {}).items():
            status = value.get("status") if isinstance(value, dict) else None
            status = status if isinstance(status, str) else None
            expired = is_expired(value, at)
            people.append(
                Participant(
                    user=user_of(key),
                    status=status,
                    online=status != "offline" and not expired,
                    expired=expired,
                    expires_at=expires_at(value),
                )
            )
        return sorted(people, key=lambda p: (not p.online, p.user))

    def online(self, now: datetime | None = None) -> list[str]:
        """The users online at ``now`` (default: the current time), by name."""
        return [p.user for p in self.presence(now) if p.online]

    def typing(self, now: datetime | None = None) -> list[str]:
        """The users typing at ``now`` (default: the current time), by name."""
        at = now or utc_now()
        entries = self._data.get("typing", {})
        return sorted(user_of(key) for key, value in entries.items() if not is_expired(value, at))

    def reactions(self) -> dict[str, dict[str, list[str]]]:
        """Message id → emoji → users, in the order they first appeared."""
        found: dict[str, dict[str, list[str]]] = {}
        for key, value in self._data.get("reaction", {}).items():
            reaction = parse_reaction_key(key, value)
            if reaction is None or not reaction.emoji:
                continue
            users = found.setdefault(reaction.message_id, {}).setdefault(reaction.emoji, [])
            users.append(reaction.user)
        return found


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) else None

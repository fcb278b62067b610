"""The keys of session events (sessions.md §2): ``msg:{id}``, ``user:{id}`` and
``reaction:{msg id}:{user id}:{emoji}``, both ways."""

from __future__ import annotations

from dataclasses import dataclass

MESSAGE_PREFIX = "msg:"
USER_PREFIX = "user:"
REACTION_PREFIX = "reaction:"


def message_key(message_id: str) -> str:
    """``msg:{id}``."""
    return MESSAGE_PREFIX + _id(message_id, "message id")


def user_key(user: str) -> str:
    """``user:{id}``."""
    return USER_PREFIX + _id(user, "user id")


def reaction_key(message_id: str, user: str, emoji: str) -> str:
    """``reaction:{msg id}:{user id}:{emoji}``; neither id may hold a ``:``."""
    for value, what in ((message_id, "message id"), (user, "user id")):
        if ":" in _id(value, what):
            raise ValueError(f"a {what} in a reaction key cannot hold ':' ({value!r})")
    if not emoji:
        raise ValueError("an emoji is a non-empty string")
    return f"{REACTION_PREFIX}{message_id}:{user}:{emoji}"


def message_id_of(key: str) -> str:
    """The id of ``msg:{id}`` (the key itself when it has no such prefix)."""
    return key.removeprefix(MESSAGE_PREFIX)


def user_of(key: str) -> str:
    """The id of ``user:{id}`` (the key itself when it has no such prefix)."""
    return key.removeprefix(USER_PREFIX)


@dataclass(frozen=True, slots=True)
class ReactionKey:
    """What a reaction key names."""

    message_id: str
    user: str
    emoji: str


def parse_reaction_key(key: str, value: object = None) -> ReactionKey | None:
    """The parts of a reaction key, None when it is not one.

    The message id may also be written as its key (``reaction:msg:{id}:...``),
    and the value's ``emoji``, when it is a string, wins over the key's (the
    session viewer reads them the same way).
    """
    parts = key.split(":")
    if parts[0] != "reaction" or len(parts) < 3:
        return None
    rest = parts[1:]
    if rest[0] == "msg" and len(rest) >= 3:
        rest = rest[1:]
    emoji = value.get("emoji") if isinstance(value, dict) else None
    if not isinstance(emoji, str):
        emoji = ":".join(rest[2:])
    return ReactionKey(message_id=rest[0], user=rest[1], emoji=emoji)


def _id(value: str, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"a {what} is a non-empty string")
    return value

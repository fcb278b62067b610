"""The session fold (sessions.md §6): a session's messages, in stream order, into its state.

``state`` is ``{type: {key: value}}``. An upsert stores ``value`` (null when
absent) at (type, key); a delete removes it, and a type left empty goes too;
a ``chunk`` append adds its text to ``state["message"][key]``: created as
``{"role": <chunk role or null>, "text": <chunk text>}`` when absent,
otherwise (an object) its ``text`` grows by the chunk's (a missing or
non-string text counts as ``""``); a non-object entry is left as it is.
Other appends, other operations and messages without type or key change
nothing (State Protocol control messages included). The fold only ever
appends, so folding the messages after a snapshot's offset onto its state
equals replaying the whole stream.

This is the one fold of the SDK; ds-spark's snapshot job folds the same way
(a test holds the two to each other), and so does the session viewer.
"""

from __future__ import annotations

from typing import Any, TypeAlias

from durable_sessions.sessions.fields import APPEND, DELETE, UPSERT, fields_of

SNAPSHOT_FORMAT = "ds-session-state/1"
State: TypeAlias = dict[str, dict[str, Any]]
"""``{type: {key: value}}``."""


class SnapshotFormatError(ValueError):
    """A snapshot document that is not ``ds-session-state/1``."""


def fold(state: State, message: Any) -> None:
    """Fold one decoded message into ``state`` (in place; values are never mutated)."""
    fields = fields_of(message)
    if fields.type is None or fields.key is None:
        return
    kind = fields.kind
    if kind == UPSERT:
        state.setdefault(fields.type, {})[fields.key] = message.get("value")
    elif kind == DELETE:
        entries = state.get(fields.type)
        if entries is not None:
            entries.pop(fields.key, None)
            if not entries:
                del state[fields.type]
    elif kind == APPEND and fields.type == "chunk":
        _append_chunk(state.setdefault("message", {}), fields.key, message.get("value"))


def _append_chunk(messages: dict[str, Any], key: str, chunk: Any) -> None:
    text = _text(chunk)
    if key not in messages:
        role = chunk.get("role") if isinstance(chunk, dict) else None
        messages[key] = {"role": role, "text": text}
        return
    entry = messages[key]
    if isinstance(entry, dict):
        messages[key] = {**entry, "text": _text(entry) + text}


def _text(value: Any) -> str:
    text = value.get("text") if isinstance(value, dict) else None
    return text if isinstance(text, str) else ""


def snapshot_document(state: State, offset: str) -> dict[str, Any]:
    """The snapshot of ``state`` folded up to ``offset`` (exclusive), as §6 publishes it."""
    return {"format": SNAPSHOT_FORMAT, "offset": offset, "state": state}


def state_of_snapshot(document: Any) -> State:
    """The ``state`` of a ``ds-session-state/1`` document (decoded JSON), as a fresh copy.

    Raises `SnapshotFormatError` for anything else.
    """
    if isinstance(document, dict) and document.get("format") == SNAPSHOT_FORMAT:
        state = document.get("state")
        if isinstance(state, dict) and all(isinstance(v, dict) for v in state.values()):
            return {kind: dict(entries) for kind, entries in state.items()}
    raise SnapshotFormatError(f"not a {SNAPSHOT_FORMAT} snapshot")

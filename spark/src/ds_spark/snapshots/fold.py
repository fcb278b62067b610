"""Folding a session's messages into its state (sessions.md §6).

In stream order: an upsert stores ``value`` (null when absent) at
``state[type][key]``; a delete removes it, and a type left empty goes too;
a ``chunk`` append adds its text to ``state["message"][key]`` (created as
``{"role": <chunk role or null>, "text": <chunk text>}``; a non-object
entry is left alone). Other appends and messages without type or key
change nothing. The fold only ever appends, so folding the messages after a
snapshot onto its state equals replaying the whole stream.
"""

from __future__ import annotations

from typing import Any

import msgspec
from ds_sync.events import extract

from ds_spark.analytics.columns import APPEND, DELETE, OPERATION_KINDS, UPSERT
from ds_spark.errors import SnapshotError

SNAPSHOT_FORMAT = "ds-session-state/1"
State = dict[str, dict[str, Any]]

_decoder = msgspec.json.Decoder()


def apply_message(state: State, message: Any) -> None:
    """Fold one decoded message into ``state`` (in place)."""
    fields = extract(message)
    if fields.event_type is None or fields.event_key is None or fields.operation is None:
        return
    kind = OPERATION_KINDS.get(fields.operation)
    value = message.get("value")
    if kind == UPSERT:
        state.setdefault(fields.event_type, {})[fields.event_key] = value
    elif kind == DELETE:
        entries = state.get(fields.event_type)
        if entries is not None:
            entries.pop(fields.event_key, None)
            if not entries:
                del state[fields.event_type]
    elif kind == APPEND and fields.event_type == "chunk":
        _append_chunk(state.setdefault("message", {}), fields.event_key, value)


def _append_chunk(messages: dict[str, Any], key: str, chunk: Any) -> None:
    text = _text(chunk)
    entry = messages.get(key)
    if key not in messages:
        role = chunk.get("role") if isinstance(chunk, dict) else None
        messages[key] = {"role": role, "text": text}
    elif isinstance(entry, dict):
        entry["text"] = _text(entry) + text


def _text(value: Any) -> str:
    text = value.get("text") if isinstance(value, dict) else None
    return text if isinstance(text, str) else ""


def apply_raw(state: State, raw: bytes | str) -> None:
    """Fold one message as the stream stores it (JSON text)."""
    apply_message(state, _decoder.decode(raw))


def state_of_snapshot(stream: str, blob: bytes | str) -> State:
    """The ``state`` of a published snapshot; SnapshotError for a blob of another format."""
    document = _decoder.decode(blob)
    if isinstance(document, dict) and document.get("format") == SNAPSHOT_FORMAT:
        state = document.get("state")
        if isinstance(state, dict) and all(isinstance(v, dict) for v in state.values()):
            return state
    raise SnapshotError(
        f"stream {stream} has a snapshot that is not a {SNAPSHOT_FORMAT} document; "
        "its state cannot be continued"
    )

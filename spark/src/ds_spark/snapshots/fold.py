"""Folding a session's messages into its state (sessions.md §6): the SDK's fold.

``durable_sessions.sessions.fold`` is the one fold (applications' session
state, the viewer's, these snapshots); here it is fed the messages as the
stream stores them, and a published snapshot's state is read back with
ds-spark's one-line error for a blob of another format.
"""

from __future__ import annotations

from typing import Any

import msgspec
from durable_sessions.sessions.fold import (
    SNAPSHOT_FORMAT,
    SnapshotFormatError,
    State,
    fold,
)
from durable_sessions.sessions.fold import state_of_snapshot as session_state_of

from ds_spark.errors import SnapshotError

__all__ = ["SNAPSHOT_FORMAT", "State", "apply_message", "apply_raw", "state_of_snapshot"]

_decoder = msgspec.json.Decoder()

apply_message = fold
"""Fold one decoded message into ``state`` (in place)."""


def apply_raw(state: State, raw: bytes | str) -> None:
    """Fold one message as the stream stores it (JSON text)."""
    fold(state, _decoder.decode(raw))


def state_of_snapshot(stream: str, blob: bytes | str) -> State:
    """The ``state`` of a published snapshot; SnapshotError for a blob of another format."""
    document: Any = _decoder.decode(blob)
    try:
        return session_state_of(document)
    except SnapshotFormatError:
        raise SnapshotError(
            f"stream {stream} has a snapshot that is not a {SNAPSHOT_FORMAT} document; "
            "its state cannot be continued"
        ) from None

"""The §6 fold, message by message (ds-spark's fold is held to it in spark/tests)."""

from __future__ import annotations

from typing import Any

import pytest
from durable_sessions.sessions import (
    SnapshotFormatError,
    State,
    fold,
    snapshot_document,
    state_of_snapshot,
)


def _fold(*messages: Any, state: State | None = None) -> State:
    result: State = {} if state is None else state
    for message in messages:
        fold(result, message)
    return result


def test_upserts_store_the_value_and_deletes_remove_it() -> None:
    state = _fold(
        {"type": "presence", "key": "user:a", "operation": "set", "value": {"status": "on"}},
        {"type": "presence", "key": "user:b", "headers": {"operation": "insert"}},
        {"type": "presence", "key": "user:a", "headers": {"operation": "delete"}},
        {"type": "t", "key": "k", "operation": "update", "value": 1},
        {"type": "t", "key": "k", "operation": "remove"},
    )
    assert state == {"presence": {"user:b": None}}


def test_chunks_grow_the_message_they_belong_to() -> None:
    chunk = {"role": "assistant", "text": "Hel"}
    state = _fold(
        {"type": "chunk", "key": "msg:1", "operation": "append", "value": chunk},
        {
            "type": "chunk",
            "key": "msg:1",
            "headers": {"operation": "append"},
            "value": {"text": "lo"},
        },
        {"type": "chunk", "key": "msg:1", "operation": "append", "value": {"text": 5}},
        {"type": "chunk", "key": "msg:2", "operation": "append"},
        {"type": "message", "key": "msg:3", "operation": "insert", "value": "plain"},
        {"type": "chunk", "key": "msg:3", "operation": "append", "value": {"text": "x"}},
        {"type": "note", "key": "n", "operation": "append", "value": {"text": "ignored"}},
    )
    assert state == {
        "message": {
            "msg:1": {"role": "assistant", "text": "Hello"},
            "msg:2": {"role": None, "text": ""},
            "msg:3": "plain",
        }
    }
    assert chunk == {"role": "assistant", "text": "Hel"}  # values are not mutated


def test_what_is_no_session_event_changes_nothing() -> None:
    state = _fold(
        {"type": "message", "key": "msg:1", "operation": "insert", "value": {"text": "a"}},
        {"headers": {"control": "reset"}},
        {"type": "message", "key": "msg:1", "operation": "Delete"},
        {"type": 1, "key": "msg:1", "operation": "delete"},
        "not an object",
        [1, 2],
    )
    assert state == {"message": {"msg:1": {"text": "a"}}}


def test_headers_win_field_by_field() -> None:
    state = _fold(
        {"type": "t", "key": "k", "operation": "delete", "headers": {"operation": "set"}},
        {"type": "t", "key": "j", "operation": "set", "headers": {"operation": None}},
        {"type": "x", "key": "k", "operation": "set", "headers": {"type": "u", "key": "v"}},
    )
    assert state == {"t": {"k": None, "j": None}, "u": {"v": None}}


def test_a_snapshot_round_trips() -> None:
    state = _fold({"type": "t", "key": "k", "operation": "set", "value": [1]})
    document = snapshot_document(state, "00000000000000000042")
    assert document == {
        "format": "ds-session-state/1",
        "offset": "00000000000000000042",
        "state": {"t": {"k": [1]}},
    }
    restored = state_of_snapshot(document)
    assert restored == state
    assert restored["t"] is not state["t"]


@pytest.mark.parametrize(
    "document",
    [
        {"format": "ds-session-state/2", "state": {}},
        {"format": "ds-session-state/1", "state": {"t": []}},
        {"format": "ds-session-state/1"},
        [],
    ],
)
def test_other_documents_are_refused(document: Any) -> None:
    with pytest.raises(SnapshotFormatError):
        state_of_snapshot(document)

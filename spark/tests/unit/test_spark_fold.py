"""The §6 fold, message by message."""

from __future__ import annotations

from typing import Any

import pytest
from ds_spark.errors import SnapshotError
from ds_spark.snapshots.fold import State, apply_message, state_of_snapshot


def _fold(*messages: Any, state: State | None = None) -> State:
    result: State = {} if state is None else state
    for message in messages:
        apply_message(result, message)
    return result


def test_upsert_stores_value_and_delete_removes_it() -> None:
    state = _fold(
        {"type": "presence", "key": "user:a", "operation": "set", "value": {"status": "on"}},
        {"type": "presence", "key": "user:b", "headers": {"operation": "insert"}},
        {"type": "presence", "key": "user:a", "headers": {"operation": "delete"}},
    )
    assert state == {"presence": {"user:b": None}}
    assert (
        _fold(
            {"type": "t", "key": "k", "operation": "set"},
            {"type": "t", "key": "k", "operation": "remove"},
        )
        == {}
    )


def test_chunks_append_text_to_the_message() -> None:
    state = _fold(
        {
            "type": "chunk",
            "key": "msg:1",
            "operation": "append",
            "value": {"role": "assistant", "text": "Hel"},
        },
        {"type": "chunk", "key": "msg:1", "operation": "append", "value": {"text": "lo"}},
        {"type": "chunk", "key": "msg:1", "operation": "append", "value": {"text": 5}},
        {"type": "chunk", "key": "msg:2", "operation": "append"},
    )
    assert state == {
        "message": {
            "msg:1": {"role": "assistant", "text": "Hello"},
            "msg:2": {"role": None, "text": ""},
        }
    }


def test_chunk_onto_an_existing_message() -> None:
    state = _fold(
        {"type": "message", "key": "msg:1", "operation": "insert", "value": {"role": "assistant"}},
        {"type": "message", "key": "msg:2", "operation": "insert", "value": "not an object"},
        {"type": "chunk", "key": "msg:1", "operation": "append", "value": {"text": "a"}},
        {"type": "chunk", "key": "msg:2", "operation": "append", "value": {"text": "b"}},
    )
    assert state == {
        "message": {"msg:1": {"role": "assistant", "text": "a"}, "msg:2": "not an object"}
    }


def test_what_changes_nothing() -> None:
    assert (
        _fold(
            {"type": "presence", "key": "user:a", "operation": "append", "value": {}},
            {"type": "presence", "key": "user:a", "operation": "Set", "value": {}},
            {"type": "presence", "operation": "set"},
            {"headers": {"control": "reset"}},
            {"type": "t", "key": "gone", "operation": "delete"},
            17,
            None,
        )
        == {}
    )


def test_incremental_fold_equals_full_replay() -> None:
    messages = [
        {"type": "chunk", "key": "msg:1", "operation": "append", "value": {"text": "a"}},
        {"type": "reaction", "key": "r", "operation": "set", "value": {"emoji": "+1"}},
        {"type": "chunk", "key": "msg:1", "operation": "append", "value": {"text": "b"}},
        {"type": "reaction", "key": "r", "operation": "delete"},
    ]
    for cut in range(len(messages) + 1):
        assert _fold(*messages[cut:], state=_fold(*messages[:cut])) == _fold(*messages)


def test_snapshot_of_another_format_is_refused() -> None:
    assert state_of_snapshot("s", b'{"format": "ds-session-state/1", "state": {"t": {}}}') == {
        "t": {}
    }
    with pytest.raises(SnapshotError, match="not a ds-session-state/1 document"):
        state_of_snapshot("s", b'{"state": {}}')

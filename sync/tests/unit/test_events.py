"""Normalising session events (sessions.md §2): both shapes, precedence per field, bad input."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from ds_sync.events import NO_FIELDS, EventFields, OperationKind, extract, extract_raw

TEN = datetime(2026, 11, 26, 10, 0, 0, tzinfo=UTC)
TEN_125 = datetime(2026, 11, 26, 10, 0, 0, 125000, tzinfo=UTC)


def test_state_protocol_change_message() -> None:
    message = {
        "type": "message",
        "key": "msg:42",
        "value": {"role": "user", "text": "hi", "author": "user:alice"},
        "headers": {"operation": "insert", "timestamp": "2026-11-26T10:00:00.125Z"},
    }
    assert extract(message) == EventFields("message", "msg:42", "insert", TEN_125)


def test_reference_flat_shape() -> None:
    message = {
        "type": "presence",
        "key": "user:alice",
        "operation": "set",
        "value": {"status": "online"},
        "timestamp": "2026-11-26T10:00:00Z",
    }
    assert extract(message) == EventFields("presence", "user:alice", "set", TEN)


def test_each_field_chosen_on_its_own() -> None:
    message = {
        "type": "chunk",
        "key": "msg:1",
        "operation": "append",
        "timestamp": "2026-11-26T10:00:00Z",
        # headers hold the operation only: the time comes from the top level.
        "headers": {"operation": "update"},
    }
    assert extract(message) == EventFields("chunk", "msg:1", "update", TEN)


def test_null_header_falls_back_to_top_level() -> None:
    message = {
        "type": "t",
        "key": "k",
        "operation": "delete",
        "timestamp": "2026-11-26T10:00:00Z",
        "headers": {"operation": None, "timestamp": None},
    }
    assert extract(message) == EventFields("t", "k", "delete", TEN)


def test_unparsable_header_timestamp_does_not_fall_back() -> None:
    message = {
        "type": "t",
        "key": "k",
        "timestamp": "2026-11-26T10:00:00Z",
        "headers": {"timestamp": "yesterday"},
    }
    assert extract(message).event_time is None


def test_non_string_header_operation_does_not_fall_back() -> None:
    message = {"type": "t", "key": "k", "operation": "set", "headers": {"operation": 5}}
    assert extract(message).operation is None


def test_headers_that_are_not_an_object_are_ignored() -> None:
    message = {"type": "t", "key": "k", "operation": "set", "headers": ["operation"]}
    assert extract(message).operation == "set"


@pytest.mark.parametrize("message", [42, "text", None, True, [1, 2], [{"type": "t", "key": "k"}]])
def test_non_object_message_has_no_fields(message: object) -> None:
    assert extract(message) == NO_FIELDS


def test_missing_type_or_key_leaves_only_the_event_time() -> None:
    # sessions.md §2: without both, type, key and operation are all null.
    fields = extract({"key": "k", "operation": "set", "timestamp": "2026-11-26T10:00:00Z"})
    assert fields == EventFields(None, None, None, TEN)
    fields = extract({"type": "t", "headers": {"timestamp": "2026-11-26T10:00:00Z"}})
    assert fields == EventFields(None, None, None, TEN)
    fields = extract({"type": "t", "key": 7, "operation": "set"})
    assert fields == NO_FIELDS


def test_type_and_key_must_be_strings_but_may_be_empty() -> None:
    assert extract({"type": 1, "key": ["k"]}) == NO_FIELDS
    assert extract({"type": "", "key": ""}) == EventFields("", "", None, None)


def test_control_message_has_no_type_or_key() -> None:
    fields = extract({"headers": {"control": "snapshot-start", "offset": "123"}})
    assert fields == NO_FIELDS


def test_operation_kept_as_written() -> None:
    assert extract({"type": "t", "key": "k", "operation": "SET"}).operation == "SET"


@pytest.mark.parametrize(
    ("operation", "kind"),
    [
        ("set", OperationKind.UPSERT),
        ("insert", OperationKind.UPSERT),
        ("update", OperationKind.UPSERT),
        ("remove", OperationKind.DELETE),
        ("delete", OperationKind.DELETE),
        ("append", OperationKind.APPEND),
        ("SET", None),  # case-sensitive
        ("upsert", None),
        (None, None),
    ],
)
def test_operation_kinds(operation: str | None, kind: OperationKind | None) -> None:
    assert EventFields(None, None, operation, None).kind is kind


def test_raw_bytes() -> None:
    assert extract_raw(b'{"type":"t","key":"k","operation":"set"}').event_type == "t"
    assert extract_raw(b"[1,2]") == NO_FIELDS
    assert extract_raw(b"not json") == NO_FIELDS

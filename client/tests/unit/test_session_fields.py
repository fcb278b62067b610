"""The §2 fields of session events (sessions.md): both shapes, precedence per field, bad input.

ds-sync's ``session_events`` columns and ds-spark's event rows are these fields."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from durable_sessions.sessions.fields import (
    APPEND,
    DELETE,
    NO_FIELDS,
    UPSERT,
    EventFields,
    Kind,
    fields_of,
    fields_of_json,
)

TEN = datetime(2026, 11, 26, 10, 0, 0, tzinfo=UTC)
TEN_125 = datetime(2026, 11, 26, 10, 0, 0, 125000, tzinfo=UTC)


def test_state_protocol_change_message() -> None:
    message = {
        "type": "message",
        "key": "msg:42",
        "value": {"role": "user", "text": "hi", "author": "user:alice"},
        "headers": {"operation": "insert", "timestamp": "2026-11-26T10:00:00.125Z"},
    }
    assert fields_of(message) == EventFields("message", "msg:42", "insert", TEN_125)


def test_reference_flat_shape() -> None:
    message = {
        "type": "presence",
        "key": "user:alice",
        "operation": "set",
        "value": {"status": "online"},
        "timestamp": "2026-11-26T10:00:00Z",
    }
    assert fields_of(message) == EventFields("presence", "user:alice", "set", TEN)


def test_each_field_chosen_on_its_own() -> None:
    message = {
        "type": "chunk",
        "key": "msg:1",
        "operation": "append",
        "timestamp": "2026-11-26T10:00:00Z",
        # headers hold the operation only: the time comes from the top level.
        "headers": {"operation": "update"},
    }
    assert fields_of(message) == EventFields("chunk", "msg:1", "update", TEN)


def test_null_header_falls_back_to_top_level() -> None:
    message = {
        "type": "t",
        "key": "k",
        "operation": "delete",
        "timestamp": "2026-11-26T10:00:00Z",
        "headers": {"operation": None, "timestamp": None},
    }
    assert fields_of(message) == EventFields("t", "k", "delete", TEN)


def test_unparsable_header_timestamp_does_not_fall_back() -> None:
    message = {
        "type": "t",
        "key": "k",
        "timestamp": "2026-11-26T10:00:00Z",
        "headers": {"timestamp": "yesterday"},
    }
    assert fields_of(message).time is None


def test_non_string_header_operation_does_not_fall_back() -> None:
    message = {"type": "t", "key": "k", "operation": "set", "headers": {"operation": 5}}
    assert fields_of(message).operation is None


def test_headers_that_are_not_an_object_are_ignored() -> None:
    message = {"type": "t", "key": "k", "operation": "set", "headers": ["operation"]}
    assert fields_of(message).operation == "set"


@pytest.mark.parametrize("message", [42, "text", None, True, [1, 2], [{"type": "t", "key": "k"}]])
def test_non_object_message_has_no_fields(message: object) -> None:
    assert fields_of(message) == NO_FIELDS


def test_missing_type_or_key_leaves_only_the_event_time() -> None:
    # sessions.md §2: without both, type, key and operation are all null.
    fields = fields_of({"key": "k", "operation": "set", "timestamp": "2026-11-26T10:00:00Z"})
    assert fields == EventFields(None, None, None, TEN)
    fields = fields_of({"type": "t", "headers": {"timestamp": "2026-11-26T10:00:00Z"}})
    assert fields == EventFields(None, None, None, TEN)
    fields = fields_of({"type": "t", "key": 7, "operation": "set"})
    assert fields == NO_FIELDS


def test_type_and_key_must_be_strings_but_may_be_empty() -> None:
    assert fields_of({"type": 1, "key": ["k"]}) == NO_FIELDS
    assert fields_of({"type": "", "key": ""}) == EventFields("", "", None, None)


def test_control_message_has_no_type_or_key() -> None:
    fields = fields_of({"headers": {"control": "snapshot-start", "offset": "123"}})
    assert fields == NO_FIELDS


def test_operation_kept_as_written() -> None:
    assert fields_of({"type": "t", "key": "k", "operation": "SET"}).operation == "SET"


@pytest.mark.parametrize(
    ("operation", "kind"),
    [
        ("set", UPSERT),
        ("insert", UPSERT),
        ("update", UPSERT),
        ("remove", DELETE),
        ("delete", DELETE),
        ("append", APPEND),
        ("SET", None),  # case-sensitive
        ("upsert", None),
        (None, None),
    ],
)
def test_operation_kinds(operation: str | None, kind: Kind | None) -> None:
    assert EventFields(None, None, operation, None).kind == kind


def test_raw_bytes() -> None:
    assert fields_of_json(b'{"type":"t","key":"k","operation":"set"}').type == "t"
    assert fields_of_json(b"[1,2]") == NO_FIELDS
    assert fields_of_json(b"not json") == NO_FIELDS

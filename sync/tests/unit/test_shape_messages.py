"""Electric Shape API messages as State Protocol changes (values read with electric-schema)."""

from __future__ import annotations

import pytest
from ds_sync.mirror import shape_messages as sm
from ds_sync.mirror.model import Change

SCHEMA = sm.parse_schema(
    '{"id":{"type":"int4","dims":0,"pk_index":0,"not_null":true},'
    '"at":{"type":"timestamptz","dims":0},"tags":{"type":"text","dimensions":1},'
    '"doc":{"type":"jsonb"},"flag":{"type":"bool"}}'
)
AT = "2026-11-26T10:00:00.000001Z"


def logged(operation: str, value: dict[str, object], **more: object) -> dict[str, object]:
    headers = {"operation": operation, "lsn": "26800584", "op_position": 0, "txids": [750]}
    return {"headers": headers, "key": '"public"."t"/"1"', "value": value, **more}


def test_schema_columns() -> None:
    assert SCHEMA["tags"].is_array
    assert not SCHEMA["id"].is_array


def test_insert_values_follow_the_schema() -> None:
    value = {
        "id": "1",
        "at": "2026-11-26 10:00:00+00",
        "tags": "{a,b}",
        "flag": "t",
        "doc": '{"x":1}',
    }
    (change,) = sm.changes(logged("insert", value), SCHEMA, ("id",), AT)
    assert change.key == "1"
    assert change.txid == "750"
    assert change.value is not None
    assert change.value["id"] == 1
    assert change.value["at"] == "2026-11-26T10:00:00Z"
    assert change.value["tags"] == "{a,b}"
    assert change.value["flag"] is True


def test_update_with_replica_full_rebuilds_the_old_row() -> None:
    message = logged("update", {"id": "1", "flag": "f"}, old_value={"flag": "t"})
    assert sm.changes(message, SCHEMA, ("id",), AT) == [
        Change("update", "1", {"id": 1, "flag": False}, {"id": 1, "flag": True}, "750", AT)
    ]


def test_a_key_change_is_a_delete_and_an_insert() -> None:
    message = logged("update", {"id": "2", "flag": "f"}, old_value={"id": "1"})
    assert [(c.operation, c.key) for c in sm.changes(message, SCHEMA, ("id",), AT)] == [
        ("delete", "1"),
        ("insert", "2"),
    ]


def test_delete_carries_the_old_row() -> None:
    (change,) = sm.changes(logged("delete", {"id": "1", "flag": "t"}), SCHEMA, ("id",), AT)
    assert (change.value, change.old_value) == (None, {"id": 1, "flag": True})


def test_snapshot_rows_have_no_txid_and_a_single_txid_header_is_read_too() -> None:
    snap = {"headers": {"operation": "insert"}, "value": {"id": "1"}}
    assert not sm.is_logged(snap["headers"])  # type: ignore[arg-type]
    assert sm.changes(snap, SCHEMA, ("id",), AT)[0].txid is None
    old = {"headers": {"operation": "insert", "txid": 9}, "value": {"id": "1"}}
    assert sm.changes(old, SCHEMA, ("id",), AT)[0].txid == "9"


def test_values_that_are_not_strings_are_taken_as_their_text() -> None:
    message = logged("insert", {"id": 1, "flag": True, "unknown": 2.5})
    (change,) = sm.changes(message, SCHEMA, ("id",), AT)
    assert change.value == {"id": 1, "flag": True, "unknown": "2.5"}


@pytest.mark.parametrize("body", [b"{", b"{}", b'[{"no":"headers"}]', b"[1]"])
def test_a_body_that_is_not_messages_is_an_error(body: bytes) -> None:
    with pytest.raises(sm.ShapeFormatError):
        sm.parse_body(body)


def test_a_bad_schema_or_operation_is_an_error() -> None:
    with pytest.raises(sm.ShapeFormatError):
        sm.parse_schema('{"id": 1}')
    with pytest.raises(sm.ShapeFormatError):
        sm.changes({"headers": {"operation": "upsert"}, "value": {"id": "1"}}, SCHEMA, ("id",), AT)

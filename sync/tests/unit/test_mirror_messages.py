"""State Protocol messages of a batch, and POST bodies of bounded size."""

from __future__ import annotations

import msgspec
from ds_sync.mirror.messages import bodies, encode_item
from ds_sync.mirror.model import Change, Control

T = "2026-11-26T10:00:00.000001Z"


def decode(raw: bytes) -> object:
    return msgspec.json.decode(raw)


def test_change_messages() -> None:
    insert = Change("insert", "1", {"id": 1}, {"ignored": True}, "750", T)
    assert decode(encode_item("items", insert)) == {
        "type": "items",
        "key": "1",
        "value": {"id": 1},
        "headers": {"operation": "insert", "txid": "750", "timestamp": T},
    }
    delete = Change("delete", "1", None, {"id": 1}, None, T)
    assert decode(encode_item("items", delete)) == {
        "type": "items",
        "key": "1",
        "value": None,
        "old_value": {"id": 1},
        "headers": {"operation": "delete", "timestamp": T},
    }


def test_control_messages() -> None:
    assert (
        encode_item("items", Control.SNAPSHOT_START) == b'{"headers":{"control":"snapshot-start"}}'
    )
    assert decode(encode_item("items", Control.RESET)) == {"headers": {"control": "reset"}}


def test_bodies_are_json_arrays_within_the_bound() -> None:
    messages = [b'{"n":%d}' % n for n in range(100)]
    found = bodies(messages, 64)
    assert all(len(body) <= 64 for body in found)
    assert [m for body in found for m in msgspec.json.decode(body)] == [
        {"n": n} for n in range(100)
    ]


def test_a_message_larger_than_the_bound_goes_alone() -> None:
    big = b'"' + b"x" * 100 + b'"'
    assert bodies([b"1", big, b"2"], 50) == [b"[1]", b"[" + big + b"]", b"[2]"]
    assert bodies([], 50) == []

"""pgoutput messages of a table as transactions of State Protocol changes."""

from __future__ import annotations

import pytest
from ds_sync.mirror import pgoutput
from ds_sync.mirror.decoding import Decoder, rfc3339_us
from ds_sync.mirror.model import Change, Control
from pgoutput_bytes import (
    INT4_OID,
    TEXT_OID,
    begin,
    commit,
    delete,
    insert,
    relation,
    truncate,
    update,
    values,
)

NOW_US = 1_795_700_000_123_456
STAMP = rfc3339_us(NOW_US)
TYPES = {INT4_OID: ("int4", False), TEXT_OID: ("text", False)}


def decode(*messages: bytes, primary_key: tuple[str, ...] = ("id",)) -> list[Change | Control]:
    decoder = Decoder(primary_key, dict(TYPES))
    framed = [
        relation(7, [("id", INT4_OID), ("note", TEXT_OID)]),
        begin(90, NOW_US, 750),
        *messages,
        commit(100, 130, NOW_US),
    ]
    transactions = decoder.decode(pgoutput.parse(m) for m in framed)
    assert [(t.xid, t.commit_lsn, t.end_lsn) for t in transactions] == [(750, 100, 130)]
    return transactions[0].items


def test_rfc3339_us() -> None:
    assert rfc3339_us(0) == "1970-01-01T00:00:00.000000Z"
    assert STAMP.endswith("Z")


def test_insert_update_delete() -> None:
    items = decode(
        insert(7, values("1", "a")),
        update(7, values("1", "b"), old=values("1", "a")),
        delete(7, values("1", "b")),
    )
    assert items == [
        Change("insert", "1", {"id": 1, "note": "a"}, None, "750", STAMP),
        Change("update", "1", {"id": 1, "note": "b"}, {"id": 1, "note": "a"}, "750", STAMP),
        Change("delete", "1", None, {"id": 1, "note": "b"}, "750", STAMP),
    ]


def test_an_unchanged_toasted_value_comes_from_the_old_row() -> None:
    (change,) = decode(update(7, values("1", False), old=values("1", "x" * 5000)))
    assert isinstance(change, Change)
    assert change.value == {"id": 1, "note": "x" * 5000}


def test_an_unchanged_toasted_value_without_the_old_row_is_an_error() -> None:
    with pytest.raises(pgoutput.ProtocolError, match="REPLICA IDENTITY FULL"):
        decode(update(7, values("1", False)))


def test_a_changed_primary_key_is_a_delete_and_an_insert() -> None:
    items = decode(update(7, values("2", "a"), old=values("1", "a")))
    assert items == [
        Change("delete", "1", None, {"id": 1, "note": "a"}, "750", STAMP),
        Change("insert", "2", {"id": 2, "note": "a"}, None, "750", STAMP),
    ]


def test_a_key_only_old_row_gives_no_old_value() -> None:
    items = decode(
        delete(7, values("1", None), marker=b"K"),
        update(7, values("3", "n"), old=values("2", None), marker=b"K"),
    )
    assert items == [
        Change("delete", "1", None, None, "750", STAMP),
        Change("delete", "2", None, None, "750", STAMP),
        Change("insert", "3", {"id": 3, "note": "n"}, None, "750", STAMP),
    ]


def test_truncate_is_a_reset() -> None:
    assert decode(truncate(7), insert(7, values("1", "a")))[0] is Control.RESET


def test_unknown_types_are_named_for_the_catalog() -> None:
    decoder = Decoder(("id",), {})
    found = decoder.unknown_types([pgoutput.parse(relation(7, [("id", INT4_OID)]))])
    assert found == {INT4_OID}


@pytest.mark.parametrize(
    "messages",
    [
        [insert(7, values("1", "a"))],  # no transaction
        [begin(1, NOW_US, 1), insert(8, values("1", "a")), commit(2, 3, NOW_US)],  # no relation
        [begin(1, NOW_US, 1)],  # no commit
        [commit(2, 3, NOW_US)],  # no begin
    ],
)
def test_broken_sequences_are_errors(messages: list[bytes]) -> None:
    decoder = Decoder(("id",), dict(TYPES))
    with pytest.raises(pgoutput.ProtocolError):
        decoder.decode(pgoutput.parse(m) for m in messages)

"""Parsing pgoutput messages, from bytes laid out as Postgres lays them out."""

from __future__ import annotations

import pytest
from ds_sync.mirror import pgoutput
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


def test_begin_and_commit() -> None:
    assert pgoutput.parse(begin(0x16B374D848, NOW_US, 750)) == pgoutput.Begin(
        0x16B374D848, NOW_US, 750
    )
    assert pgoutput.parse(commit(100, 130, NOW_US)) == pgoutput.Commit(100, 130, NOW_US)


def test_relation() -> None:
    parsed = pgoutput.parse(relation(16384, [("id", INT4_OID), ("note", TEXT_OID)]))
    assert parsed == pgoutput.Relation(
        16384,
        "public",
        "t",
        (pgoutput.RelationColumn("id", INT4_OID), pgoutput.RelationColumn("note", TEXT_OID)),
    )


def test_row_changes() -> None:
    assert pgoutput.parse(insert(7, values("1", None))) == pgoutput.RowChange(
        "insert", 7, None, ("1", None)
    )
    changed = pgoutput.parse(update(7, values("1", False), old=values("1", "big")))
    assert changed == pgoutput.RowChange(
        "update", 7, ("1", "big"), ("1", pgoutput.UNCHANGED), old_is_key=False
    )
    keyed = pgoutput.parse(update(7, values("2", "x"), old=values("1", None), marker=b"K"))
    assert isinstance(keyed, pgoutput.RowChange)
    assert keyed.old_is_key
    assert pgoutput.parse(update(7, values("1", "x"))) == pgoutput.RowChange(
        "update", 7, None, ("1", "x")
    )
    assert pgoutput.parse(delete(7, values("1", "x"))) == pgoutput.RowChange(
        "delete", 7, ("1", "x"), None
    )
    assert pgoutput.parse(truncate(7, 8)) == pgoutput.Truncate((7, 8))


def test_values_are_utf8_text() -> None:
    parsed = pgoutput.parse(insert(7, values("é/ü")))
    assert isinstance(parsed, pgoutput.RowChange)
    assert parsed.new == ("é/ü",)


def test_kinds_the_feed_does_not_use_are_skipped() -> None:
    assert pgoutput.parse(b"O" + bytes(8) + b"origin\0") is None
    assert pgoutput.parse(b"Y" + bytes(4) + b"public\0t\0") is None


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"Z",
        begin(1, NOW_US, 1)[:10],
        insert(7, values("1"))[:-1],
        b"I" + bytes(4) + b"X",
        delete(7, values("1"), marker=b"N"),
        b"I" + bytes(4) + b"N" + b"\x00\x01b",
    ],
)
def test_what_is_not_protocol_1_is_an_error(data: bytes) -> None:
    with pytest.raises(pgoutput.ProtocolError):
        pgoutput.parse(data)


def test_lsn_text() -> None:
    assert pgoutput.lsn_text(0x16B374D848) == "16/B374D848"
    assert pgoutput.lsn_number("16/B374D848") == 0x16B374D848
    assert pgoutput.lsn_number("0/0") == 0
    with pytest.raises(pgoutput.ProtocolError):
        pgoutput.lsn_number("nope")

"""DS_SYNC__TABLES: names, schemas, streams, refusals."""

from __future__ import annotations

import pytest
from ds_sync.table_names import TableName, TableNameError, parse_table, parse_tables


def test_plain_and_qualified_names() -> None:
    assert parse_table("items") == TableName("items", "public", "items")
    orders = parse_table("sales.Orders")
    assert (orders.schema, orders.name, orders.qualified) == ("sales", "Orders", "sales.Orders")
    assert orders.stream == "pg-sales.Orders"


def test_a_list_skips_blanks_and_may_be_empty() -> None:
    assert [t.text for t in parse_tables(" items , sales.orders ,")] == ["items", "sales.orders"]
    assert parse_tables("") == ()


@pytest.mark.parametrize("text", ["a.b.c", "1items", "it-ems", "a b", "x" * 64, "", "public."])
def test_names_that_are_not_identifiers_are_refused(text: str) -> None:
    with pytest.raises(TableNameError):
        parse_table(text)


def test_a_table_named_twice_is_refused() -> None:
    with pytest.raises(TableNameError, match="listed twice"):
        parse_tables("items,public.items")

"""Slot and publication names: lower-case, at most 63 characters, one per table."""

from __future__ import annotations

from ds_sync.mirror.slots import slot_name
from ds_sync.table_names import parse_table


def test_a_plain_name_is_kept() -> None:
    assert slot_name("sync", parse_table("items")) == "sync_public_items"


def test_a_dash_in_the_consumer_name_is_replaced_and_hashed() -> None:
    name = slot_name("ds-sync", parse_table("items"))
    assert name.startswith("ds_sync_public_items_")
    assert name == slot_name("ds-sync", parse_table("items"))


def test_changed_or_long_names_get_a_hash() -> None:
    upper = slot_name("sync", parse_table("Items"))
    lower = slot_name("sync", parse_table("items"))
    assert upper != lower
    assert upper.startswith("sync_public_items_")
    long = slot_name("sync", parse_table("s." + "x" * 63))
    assert len(long) <= 63
    assert long != slot_name("sync", parse_table("s." + "x" * 62 + "y"))

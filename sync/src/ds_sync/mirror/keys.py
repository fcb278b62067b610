"""State Protocol keys from primary key values, per sessions.md §4.

A single-column key is the value's text form as it is. A composite key
joins the values with ``/``, each value's ``\\`` and ``/`` escaped as
``\\\\`` and ``\\/``, so no two different keys give the same string.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence


class RowKeyError(ValueError):
    """A primary key column is missing or NULL in a row (the row can't be keyed)."""


def encode_key(values: Sequence[str]) -> str:
    """The key of a row whose primary key columns hold ``values`` (text forms), in key order."""
    if len(values) == 1:
        return values[0]
    return "/".join(value.replace("\\", "\\\\").replace("/", "\\/") for value in values)


def row_key(texts: Mapping[str, str | None], primary_key: Sequence[str]) -> str:
    """The key of a row given as column → text form."""
    values = []
    for column in primary_key:
        value = texts.get(column)
        if value is None:
            raise RowKeyError(f"primary key column {column!r} is missing or NULL")
        values.append(value)
    return encode_key(values)

"""Postgres array literals, built as one string per column.

The writer sends its rows as a dozen arrays. psycopg dumps a Python list
element by element in Python, which at a few rows per transaction costs
more than the rows themselves (about half a millisecond per commit here).
One ``text`` literal per array (``{"a","b",NULL}``), cast in SQL, costs a
couple of C-level joins instead, and Postgres's own parser reads it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable


def quoted(value: str) -> str:
    """One array element, double-quoted: inside the quotes only ``\\`` and ``"`` are special."""
    if "\\" in value or '"' in value:
        value = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{value}"'


def text_array(values: Iterable[str | None]) -> str:
    """``{"a","b",NULL}``: the literal of a ``text[]`` (None is NULL)."""
    return "{" + ",".join("NULL" if v is None else quoted(v) for v in values) + "}"


def int_array(values: Iterable[int]) -> str:
    """``{1,2,3}``: the literal of an integer array."""
    return "{" + ",".join(map(str, values)) + "}"

"""Which tables are mirrored into streams: ``DS_SYNC__TABLES`` (``items``, ``sales.orders``).

A name is an identifier, optionally schema-qualified, used exactly as
written (no case folding); an unqualified name is in ``public``. Its stream
is ``pg-{name}`` and its messages' ``type`` is the name as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
DEFAULT_SCHEMA = "public"
STREAM_PREFIX = "pg-"


class TableNameError(ValueError):
    """A name ds-sync can't mirror (not an identifier, or qualified more than once)."""


@dataclass(frozen=True, slots=True)
class TableName:
    """One mirrored table, as configured."""

    text: str  # as written: the message type and the stream's suffix
    schema: str
    name: str

    @property
    def qualified(self) -> str:
        """``schema.name``, the key of the table's state in ``sync_mirrors``."""
        return f"{self.schema}.{self.name}"

    @property
    def stream(self) -> str:
        return STREAM_PREFIX + self.text


def parse_table(text: str) -> TableName:
    """``name`` or ``schema.name``; TableNameError says what is wrong."""
    parts = text.split(".")
    if len(parts) > 2 or not all(_IDENTIFIER.fullmatch(part) for part in parts):
        raise TableNameError(
            f"{text!r}: a table is name or schema.name, each a letter or '_' followed by "
            "letters, digits or '_' (at most 63)"
        )
    schema, name = (parts[0], parts[1]) if len(parts) == 2 else (DEFAULT_SCHEMA, parts[0])
    return TableName(text=text, schema=schema, name=name)


def parse_tables(text: str) -> tuple[TableName, ...]:
    """Comma-separated table names (empty: none mirrored), each once."""
    tables = [parse_table(raw.strip()) for raw in text.split(",") if raw.strip()]
    seen: set[str] = set()
    for table in tables:
        if table.qualified in seen:
            raise TableNameError(f"{table.text!r} is listed twice")
        seen.add(table.qualified)
    return tuple(tables)

"""Electric Shape API responses as changes: what the headers say, and each row's values.

Pure. Electric sends every value as a string in Postgres's text form (with
the display settings the native feed's session uses too) and describes the
columns in the ``electric-schema`` header, so values map to JSON by the
same rule as the native feed's. With ``replica=full`` an update carries the
whole new row and the changed columns' old values, a delete the whole old
row. A change read from the replication stream has ``lsn`` and ``txids``
headers; rows of the initial snapshot have neither.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from ds_sync.mirror.keys import row_key
from ds_sync.mirror.model import Change
from ds_sync.mirror.values import to_json

if TYPE_CHECKING:
    from ds_sync.mirror.model import Row

HANDLE = "electric-handle"
OFFSET = "electric-offset"
SCHEMA = "electric-schema"
CURSOR = "electric-cursor"
UP_TO_DATE = "electric-up-to-date"


class ShapeFormatError(ValueError):
    """A response that doesn't follow the Shape API (the message says what is off)."""


class ColumnSchema(msgspec.Struct, frozen=True, forbid_unknown_fields=False):
    """One column of ``electric-schema``: its type and array dimensions."""

    type: str
    dims: int = 0
    dimensions: int = 0  # the name the OpenAPI file's example uses

    @property
    def is_array(self) -> bool:
        return self.dims > 0 or self.dimensions > 0


Schema = dict[str, ColumnSchema]
_schema_decoder = msgspec.json.Decoder(Schema)


def parse_schema(header: str) -> Schema:
    """The ``electric-schema`` header."""
    try:
        return _schema_decoder.decode(header)
    except msgspec.DecodeError as exc:
        raise ShapeFormatError(f"electric-schema is not a column map: {exc}") from None


def parse_body(content: bytes) -> list[dict[str, Any]]:
    """A response body: a JSON array of messages, each an object with ``headers``."""
    try:
        messages = msgspec.json.decode(content)
    except msgspec.DecodeError as exc:
        raise ShapeFormatError(f"the body is not JSON: {exc}") from None
    if not isinstance(messages, list) or not all(
        isinstance(m, dict) and isinstance(m.get("headers"), dict) for m in messages
    ):
        raise ShapeFormatError("the body is not an array of messages with headers")
    return messages


def is_logged(headers: dict[str, Any]) -> bool:
    """Whether a change came from the replication stream (not the initial snapshot)."""
    return "lsn" in headers or "txids" in headers or "txid" in headers


def changes(
    message: dict[str, Any], schema: Schema, primary_key: tuple[str, ...], read_at: str
) -> list[Change]:
    """One change message as State Protocol changes (two when the primary key changed)."""
    headers = message["headers"]
    operation = headers.get("operation")
    value = _texts(message.get("value"))
    txid = _txid(headers)
    if operation == "insert":
        key = row_key(value, primary_key)
        return [Change("insert", key, _row(value, schema), None, txid, read_at)]
    if operation == "delete":
        key = row_key(value, primary_key)
        return [Change("delete", key, None, _row(value, schema), txid, read_at)]
    if operation == "update":
        old = {**value, **_texts(message.get("old_value"))}
        key, old_key = row_key(value, primary_key), row_key(old, primary_key)
        new_row, old_row = _row(value, schema), _row(old, schema)
        if key != old_key:
            return [
                Change("delete", old_key, None, old_row, txid, read_at),
                Change("insert", key, new_row, None, txid, read_at),
            ]
        return [Change("update", key, new_row, old_row, txid, read_at)]
    raise ShapeFormatError(f"unknown operation {operation!r}")


def _txid(headers: dict[str, Any]) -> str | None:
    txids = headers.get("txids")
    if isinstance(txids, list) and txids:
        return str(txids[0])
    single = headers.get("txid")
    return None if single is None else str(single)


def _texts(row: object) -> dict[str, str | None]:
    """A row's values as text forms (Electric sends strings; anything else is made one)."""
    if row is None:
        return {}
    if not isinstance(row, dict):
        raise ShapeFormatError("a row is not an object")
    texts: dict[str, str | None] = {}
    for column, value in row.items():
        if value is None or isinstance(value, str):
            texts[column] = value
        elif isinstance(value, bool):
            texts[column] = "t" if value else "f"
        elif isinstance(value, int | float):
            texts[column] = str(value)
        else:
            texts[column] = msgspec.json.encode(value).decode()
    return texts


def _row(texts: dict[str, str | None], schema: Schema) -> Row:
    row: Row = {}
    for column, text in texts.items():
        found = schema.get(column)
        if found is None:
            row[column] = text
        else:
            row[column] = to_json(found.type, text, is_array=found.is_array)
    return row

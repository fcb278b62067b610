"""The native feed's first sync: the table's rows at one snapshot, read in chunks.

The slot exists before the snapshot is taken, so every transaction is in
the snapshot, or decoded by the slot afterwards, or both. ``Visibility``
tells the both apart: a decoded transaction the snapshot already sees is
skipped. Past the WAL position the snapshot was taken at, no decoded
transaction can be in it, and the filter is dropped.

The rows are read with a cursor inside one REPEATABLE READ transaction on
the table's own connection, so the snapshot stays the same across chunks.
A snapshot cut short by a crash can't be resumed (its transaction is gone):
the table is then synced again from scratch, after a ``reset``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec
from psycopg import sql

from ds_sync.mirror.decoding import rfc3339_us
from ds_sync.mirror.keys import row_key
from ds_sync.mirror.model import Change
from ds_sync.mirror.pgoutput import lsn_number
from ds_sync.mirror.values import to_json

if TYPE_CHECKING:
    from psycopg import AsyncConnection
    from psycopg.rows import TupleRow

    from ds_sync.mirror.model import TableShape
    from ds_sync.table_names import TableName

_CURSOR = "ds_sync_snapshot"
_XID_SPAN = 1 << 32


class Visibility(msgspec.Struct, frozen=True):
    """Which transactions a snapshot sees (``pg_current_snapshot()``, 64-bit xids), and the
    WAL position from which on no transaction can be in it."""

    xmin: int
    xmax: int
    xip: list[int]
    until: str  # an LSN

    def sees(self, xid: int) -> bool:
        """Whether the snapshot sees the committed transaction ``xid`` (32 bits, as decoded)."""
        full = _widen(xid, self.xmax)
        return full < self.xmin or (full < self.xmax and full not in self.xip)

    def applies_to(self, commit_lsn: int) -> bool:
        """Whether a transaction committed at ``commit_lsn`` may be in the snapshot."""
        return commit_lsn < lsn_number(self.until)


def _widen(xid: int, near: int) -> int:
    """The 64-bit xid whose low 32 bits are ``xid``, nearest to ``near``."""
    full = (near & ~(_XID_SPAN - 1)) | xid
    if full > near + _XID_SPAN // 2:
        full -= _XID_SPAN
    elif full < near - _XID_SPAN // 2:
        full += _XID_SPAN
    return full


def parse_snapshot(text: str, until: str) -> Visibility:
    """``pg_current_snapshot()``'s text form, ``xmin:xmax:xip,...``."""
    xmin, xmax, xip = text.split(":")
    return Visibility(int(xmin), int(xmax), [int(x) for x in xip.split(",") if x], until)


class TableSnapshot:
    """Rows of one snapshot as insert changes, chunk by chunk."""

    def __init__(self, conn: AsyncConnection[TupleRow], shape: TableShape) -> None:
        self._conn = conn
        self._shape = shape
        self.visibility: Visibility | None = None
        self._timestamp = ""

    async def begin(self, table: TableName) -> Visibility:
        """Take the snapshot and open the cursor; the snapshot's visibility."""
        await self._conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        # The transaction's first statement takes its snapshot: this one describes it.
        cursor = await self._conn.execute(
            "SELECT pg_current_snapshot()::text, pg_current_wal_insert_lsn()::text, "
            "(extract(epoch FROM now()) * 1000000)::int8"
        )
        row = await cursor.fetchone()
        assert row is not None
        self.visibility = parse_snapshot(str(row[0]), str(row[1]))
        self._timestamp = rfc3339_us(int(row[2]))
        columns = [
            sql.SQL("{}::text").format(sql.Identifier(column.name))
            for column in self._shape.columns
        ]
        query = sql.SQL(
            "DECLARE {} NO SCROLL CURSOR FOR SELECT xmin::text, {} FROM ONLY {}"
        ).format(
            sql.Identifier(_CURSOR),
            sql.SQL(", ").join(columns),
            sql.Identifier(table.schema, table.name),
        )
        await self._conn.execute(query)
        return self.visibility

    async def read(self, limit: int) -> list[Change]:
        """Up to ``limit`` more rows; fewer means the snapshot is read to its end."""
        cursor = await self._conn.execute(
            sql.SQL("FETCH FORWARD {} FROM {}").format(sql.Literal(limit), sql.Identifier(_CURSOR))
        )
        changes = []
        names = [column.name for column in self._shape.columns]
        for record in await cursor.fetchall():
            texts = dict(zip(names, record[1:], strict=True))
            value = {
                column.name: to_json(column.type_name, texts[column.name], is_array=column.is_array)
                for column in self._shape.columns
            }
            key = row_key(texts, self._shape.primary_key)
            # txid: the transaction that wrote this row version (its xmin).
            changes.append(Change("insert", key, value, None, str(record[0]), self._timestamp))
        return changes

    async def finish(self) -> None:
        await self._conn.execute("COMMIT")

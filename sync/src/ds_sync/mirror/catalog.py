"""What the Postgres catalog says of a mirrored table, and the settings it needs.

The primary key gives every row its State Protocol key, so a table without
one is refused. The native feed also needs ``REPLICA IDENTITY FULL``
(updates and deletes then carry the whole old row, TOASTed values
included); ds-sync sets it when it may, and refuses the table otherwise.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from psycopg import errors as pg_errors
from psycopg import sql

from ds_sync.mirror.model import Column, TableRefused, TableShape

if TYPE_CHECKING:
    from collections.abc import Iterable

    from psycopg import AsyncConnection
    from psycopg.rows import TupleRow

    from ds_sync.table_names import TableName

log = logging.getLogger("ds_sync.mirror")

_RELATION = """
SELECT c.oid, c.relreplident FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = %s AND c.relname = %s AND c.relkind IN ('r', 'p')
"""
_COLUMNS = """
SELECT attname, atttypid FROM pg_attribute
WHERE attrelid = %s AND attnum > 0 AND NOT attisdropped ORDER BY attnum
"""
_PRIMARY_KEY = """
SELECT a.attname FROM pg_index i
CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, position)
JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
WHERE i.indrelid = %s AND i.indisprimary ORDER BY k.position
"""
# Each type's name, a domain's being its base type's; arrays are marked as such.
_TYPES = """
WITH RECURSIVE base(oid, current) AS (
    SELECT oid, oid FROM pg_type WHERE oid = ANY(%s)
    UNION ALL
    SELECT b.oid, t.typbasetype FROM base b JOIN pg_type t ON t.oid = b.current
    WHERE t.typtype = 'd'
)
SELECT b.oid, t.typname, t.typcategory = 'A' FROM base b JOIN pg_type t ON t.oid = b.current
WHERE t.typtype <> 'd'
"""


async def table_shape(conn: AsyncConnection[TupleRow], table: TableName) -> TableShape:
    """The table's columns and primary key; TableRefused when it is missing or has no key."""
    cursor = await conn.execute(_RELATION, (table.schema, table.name))
    found = await cursor.fetchone()
    if found is None:
        raise TableRefused(f"table {table.qualified} does not exist")
    relid, identity = int(found[0]), str(found[1])
    cursor = await conn.execute(_COLUMNS, (relid,))
    attributes = [(str(row[0]), int(row[1])) for row in await cursor.fetchall()]
    types = await type_names(conn, {oid for _, oid in attributes})
    cursor = await conn.execute(_PRIMARY_KEY, (relid,))
    primary_key = tuple(str(row[0]) for row in await cursor.fetchall())
    if not primary_key:
        raise TableRefused(
            f"table {table.qualified} has no primary key: its rows have no State Protocol key "
            "(add a primary key, or take it out of DS_SYNC__TABLES)"
        )
    columns = tuple(Column(name, *types[oid]) for name, oid in attributes)
    return TableShape(columns, primary_key, replica_identity_full=identity == "f")


async def type_names(
    conn: AsyncConnection[TupleRow], oids: Iterable[int]
) -> dict[int, tuple[str, bool]]:
    """Type OID → (type name, is an array), domains resolved to their base type."""
    cursor = await conn.execute(_TYPES, (list(oids),))
    return {int(row[0]): (str(row[1]), bool(row[2])) for row in await cursor.fetchall()}


async def ensure_replica_identity_full(
    conn: AsyncConnection[TupleRow], table: TableName, shape: TableShape
) -> None:
    """Make updates and deletes carry the whole old row; TableRefused when not allowed to."""
    if shape.replica_identity_full:
        return
    statement = sql.SQL("ALTER TABLE {} REPLICA IDENTITY FULL").format(
        sql.Identifier(table.schema, table.name)
    )
    try:
        await conn.execute(statement)
    except pg_errors.InsufficientPrivilege:
        raise TableRefused(
            f"table {table.qualified} needs REPLICA IDENTITY FULL (so updates and deletes "
            "carry the old row) and ds-sync may not set it: run ALTER TABLE "
            f"{table.qualified} REPLICA IDENTITY FULL as its owner"
        ) from None
    log.info("set REPLICA IDENTITY FULL on %s: updates and deletes carry the old row", table.text)

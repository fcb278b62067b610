"""The native feed's replication slot and publication, and how much WAL the slot may hold.

One logical slot (``pgoutput``) and one publication per mirrored table,
both named after ds-sync's name and the table. A slot keeps every WAL
segment from its ``restart_lsn`` on, also while ds-sync is down; so at
start, when Postgres has no bound (``max_slot_wal_keep_size = -1``),
ds-sync sets one (``DS_SYNC__MAX_SLOT_WAL_KEEP_SIZE``, 4GB): past it,
Postgres invalidates the slot instead of filling its disk, and ds-sync
syncs the table again from scratch. While running, it reports the WAL the
slot holds (``ds_sync_slot_wal_bytes``) and warns above
``DS_SYNC__SLOT_WARN_MB``.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from psycopg import errors as pg_errors
from psycopg import sql

from ds_sync.mirror.model import TableRefused
from ds_sync.mirror.pgoutput import lsn_number

if TYPE_CHECKING:
    from psycopg import AsyncConnection
    from psycopg.rows import TupleRow

    from ds_sync.table_names import TableName

log = logging.getLogger("ds_sync.mirror")

_MAX_NAME = 63
_UNSAFE = re.compile(r"[^a-z0-9_]")


@dataclass(frozen=True, slots=True)
class SlotInfo:
    """What ``pg_replication_slots`` says of a slot."""

    confirmed_flush: int
    restart_lsn: int | None
    lost: bool  # invalidated: its WAL is gone (or another reason Postgres gives)
    reason: str | None
    active_pid: int | None


def slot_name(consumer: str, table: TableName) -> str:
    """The slot's (and publication's) name: lower-case letters, digits and '_', at most 63."""
    wanted = f"{consumer}_{table.schema}_{table.name}"
    name = _UNSAFE.sub("_", wanted.lower())
    if name == wanted and len(name) <= _MAX_NAME:
        return name
    # Changed or shortened: a hash of the exact name keeps two tables apart.
    digest = hashlib.sha256(wanted.encode()).hexdigest()[:10]
    return f"{name[: _MAX_NAME - 11]}_{digest}"


async def slot_info(conn: AsyncConnection[TupleRow], name: str) -> SlotInfo | None:
    """The slot, or None when it does not exist."""
    cursor = await conn.execute(
        "SELECT to_jsonb(s) FROM pg_replication_slots s WHERE slot_name = %s", (name,)
    )
    row = await cursor.fetchone()
    if row is None:
        return None
    slot: dict[str, Any] = row[0]
    # invalidation_reason is Postgres 17's; wal_status 'lost' says it on older servers.
    reason = slot.get("invalidation_reason")
    lost = slot.get("wal_status") == "lost" or reason is not None
    restart = slot.get("restart_lsn")
    return SlotInfo(
        confirmed_flush=lsn_number(slot.get("confirmed_flush_lsn") or "0/0"),
        restart_lsn=None if restart is None else lsn_number(restart),
        lost=lost,
        reason=str(reason) if reason else (slot.get("wal_status") if lost else None),
        active_pid=slot.get("active_pid"),
    )


async def create_slot(conn: AsyncConnection[TupleRow], name: str) -> SlotInfo:
    """A new logical slot; it decodes every transaction committed after it exists."""
    try:
        await conn.execute("SELECT pg_create_logical_replication_slot(%s, 'pgoutput')", (name,))
    except pg_errors.InsufficientPrivilege:
        raise TableRefused(
            "ds-sync may not create a replication slot: its Postgres user needs the "
            "REPLICATION attribute (ALTER ROLE ... REPLICATION)"
        ) from None
    except pg_errors.ObjectNotInPrerequisiteState as exc:  # wal_level is not logical
        raise TableRefused(
            f"Postgres can't decode its WAL: {exc} (set wal_level = logical)"
        ) from None
    except pg_errors.ConfigurationLimitExceeded as exc:
        raise TableRefused(f"no replication slot is free: {exc}") from None
    info = await slot_info(conn, name)
    assert info is not None
    return info


async def drop_slot(conn: AsyncConnection[TupleRow], name: str) -> None:
    await conn.execute(
        "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = %s",
        (name,),
    )


async def ensure_publication(conn: AsyncConnection[TupleRow], name: str, table: TableName) -> None:
    """A publication of exactly this table (pgoutput sends only published tables)."""
    cursor = await conn.execute(
        "SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = %s", (name,)
    )
    published = {(str(row[0]), str(row[1])) for row in await cursor.fetchall()}
    if published == {(table.schema, table.name)}:
        return
    target = sql.Identifier(table.schema, table.name)
    cursor = await conn.execute("SELECT 1 FROM pg_publication WHERE pubname = %s", (name,))
    exists = await cursor.fetchone() is not None
    statement = (
        "ALTER PUBLICATION {} SET TABLE {}" if exists else "CREATE PUBLICATION {} FOR TABLE {}"
    )
    try:
        await conn.execute(sql.SQL(statement).format(sql.Identifier(name), target))
    except pg_errors.InsufficientPrivilege:
        raise TableRefused(
            f"ds-sync may not publish {table.qualified}: its Postgres user needs CREATE on the "
            "database and ownership of the table"
        ) from None


async def bound_slot_wal(conn: AsyncConnection[TupleRow], size: str) -> None:
    """Set ``max_slot_wal_keep_size`` when Postgres has no bound; never change an operator's."""
    cursor = await conn.execute(
        "SELECT setting FROM pg_settings WHERE name = 'max_slot_wal_keep_size'"
    )
    row = await cursor.fetchone()
    if row is None or str(row[0]) != "-1":
        return
    if size == "off":
        log.warning(
            "max_slot_wal_keep_size is -1: a replication slot keeps WAL without bound while "
            "ds-sync is down (DS_SYNC__MAX_SLOT_WAL_KEEP_SIZE=off leaves it so)"
        )
        return
    try:
        await conn.execute(
            sql.SQL("ALTER SYSTEM SET max_slot_wal_keep_size = {}").format(sql.Literal(size))
        )
        await conn.execute("SELECT pg_reload_conf()")
    except pg_errors.InsufficientPrivilege:
        log.warning(
            "max_slot_wal_keep_size is -1 and ds-sync may not set it: a replication slot keeps "
            "WAL without bound while ds-sync is down; set it (ALTER SYSTEM SET "
            "max_slot_wal_keep_size = '%s')",
            size,
        )
        return
    log.warning(
        "set Postgres's max_slot_wal_keep_size to %s (it was -1, unbounded): a slot left "
        "behind by a stopped ds-sync is invalidated there instead of filling the disk",
        size,
    )


async def retained_wal(conn: AsyncConnection[TupleRow], name: str) -> tuple[int, str] | None:
    """Bytes of WAL the slot holds back, and its ``wal_status``; None without the slot."""
    cursor = await conn.execute(
        "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint, wal_status "
        "FROM pg_replication_slots WHERE slot_name = %s",
        (name,),
    )
    row = await cursor.fetchone()
    if row is None or row[0] is None:
        return None
    return int(row[0]), str(row[1])

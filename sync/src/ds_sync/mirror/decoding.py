"""A table's ``pgoutput`` messages as transactions of State Protocol changes.

Pure: the native feed reads the slot and hands the message bytes here.
Per transaction: its xid, where its commit record starts and ends, its
commit time, and its changes in order. An update that changes the primary
key becomes a delete of the old key and an insert of the new one (as
Electric sends it), so materialising by key stays right. An unchanged
TOASTed value the new row leaves out is taken from the old row (REPLICA
IDENTITY FULL carries it). A TRUNCATE becomes a ``reset``: readers drop
the table's rows and apply what follows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from ds_sync.mirror import pgoutput
from ds_sync.mirror.keys import row_key
from ds_sync.mirror.model import Change, Control
from ds_sync.mirror.values import to_json

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from ds_sync.mirror.model import Item, Row

_UNIX_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
TypeNames = dict[int, tuple[str, bool]]  # type OID → (type name, is an array)


@dataclass(slots=True)
class Transaction:
    """One committed transaction's changes to the table."""

    xid: int
    commit_lsn: int = 0
    end_lsn: int = 0
    commit_time_us: int = 0
    items: list[Item] = field(default_factory=list)


def rfc3339_us(unix_us: int) -> str:
    """A Unix time in microseconds as RFC 3339 in UTC, to the microsecond."""
    moment = _UNIX_EPOCH + timedelta(microseconds=unix_us)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Decoder:
    """Turns one table's messages into transactions; keeps the relations it was sent."""

    def __init__(self, primary_key: tuple[str, ...], types: TypeNames) -> None:
        self.primary_key = primary_key
        self.types = types
        self._relations: dict[int, pgoutput.Relation] = {}

    def unknown_types(self, messages: Iterable[pgoutput.Message]) -> set[int]:
        """Column type OIDs in these messages' relations that ``types`` doesn't name yet."""
        return {
            column.type_oid
            for message in messages
            if isinstance(message, pgoutput.Relation)
            for column in message.columns
            if column.type_oid not in self.types
        }

    def decode(self, messages: Iterable[pgoutput.Message]) -> list[Transaction]:
        """The transactions these messages hold, whole (a peek ends on a commit)."""
        done: list[Transaction] = []
        current: Transaction | None = None
        for message in messages:
            if isinstance(message, pgoutput.Begin):
                current = Transaction(message.xid, commit_time_us=message.commit_time_us)
            elif isinstance(message, pgoutput.Relation):
                self._relations[message.relid] = message
            elif isinstance(message, pgoutput.Commit):
                if current is None:
                    raise pgoutput.ProtocolError("a commit without its begin")
                current.commit_lsn, current.end_lsn = message.commit_lsn, message.end_lsn
                current.commit_time_us = message.commit_time_us
                done.append(current)
                current = None
            elif message is not None:
                if current is None:
                    raise pgoutput.ProtocolError("a change outside a transaction")
                current.items += self._items(message, current)
        if current is not None:
            raise pgoutput.ProtocolError("a transaction without its commit")
        return done

    def _items(
        self, message: pgoutput.RowChange | pgoutput.Truncate, tx: Transaction
    ) -> list[Item]:
        if isinstance(message, pgoutput.Truncate):
            return [Control.RESET]
        relation = self._relations.get(message.relid)
        if relation is None:
            raise pgoutput.ProtocolError(
                f"a change of relation {message.relid} before its Relation"
            )
        txid, stamp = str(tx.xid), rfc3339_us(tx.commit_time_us)
        old = None
        if message.old is not None and not message.old_is_key:
            old = _texts(relation, message.old, None)
        if message.kind == "insert":
            assert message.new is not None
            new = _texts(relation, message.new, None)
            key = row_key(new, self.primary_key)
            return [Change("insert", key, self._row(relation, new), None, txid, stamp)]
        if message.kind == "delete":
            assert message.old is not None
            keyed = _texts(relation, message.old, None)
            key = row_key(keyed, self.primary_key)
            old_row = None if old is None else self._row(relation, old)
            return [Change("delete", key, None, old_row, txid, stamp)]
        assert message.new is not None
        new = _texts(relation, message.new, old)
        key = row_key(new, self.primary_key)
        if message.old is not None and message.old_is_key:
            old_key = row_key(_texts(relation, message.old, None), self.primary_key)
        else:
            old_key = key if old is None else row_key(old, self.primary_key)
        value = self._row(relation, new)
        old_row = None if old is None else self._row(relation, old)
        if old_key != key:
            return [
                Change("delete", old_key, None, old_row, txid, stamp),
                Change("insert", key, value, None, txid, stamp),
            ]
        return [Change("update", key, value, old_row, txid, stamp)]

    def _row(self, relation: pgoutput.Relation, texts: Mapping[str, str | None]) -> Row:
        row: Row = {}
        for column in relation.columns:
            type_name, is_array = self.types.get(column.type_oid, ("text", False))
            row[column.name] = to_json(type_name, texts[column.name], is_array=is_array)
        return row


def _texts(
    relation: pgoutput.Relation,
    values: tuple[pgoutput.Value, ...],
    old: Mapping[str, str | None] | None,
) -> dict[str, str | None]:
    """Column → text form; an unchanged TOASTed value is taken from ``old``."""
    if len(values) != len(relation.columns):
        raise pgoutput.ProtocolError(
            f"a row of {len(values)} values for {len(relation.columns)} columns"
        )
    texts: dict[str, str | None] = {}
    for column, value in zip(relation.columns, values, strict=True):
        if value is pgoutput.UNCHANGED:
            if old is None:
                raise pgoutput.ProtocolError(
                    f"column {column.name} is unchanged TOAST data and the old row is missing "
                    "(the table needs REPLICA IDENTITY FULL)"
                )
            texts[column.name] = old[column.name]
        else:
            texts[column.name] = value
    return texts

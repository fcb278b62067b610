"""Postgres → stream with the native feed, against a real Postgres and a real ds-server.

Each column type of sessions.md §4's mapping, composite keys, updates and
deletes with their old rows, a transaction of many rows, large rows, a
primary key changed, a truncate, a table without a primary key, and a
random workload materialised back to the table.
"""

from __future__ import annotations

import base64
import os
import random
from typing import TYPE_CHECKING, Any

import psycopg
from ds_schema.migrate import migrate
from mirror_support import (
    changes,
    controls,
    delete_stream,
    duplicates,
    items_rows,
    materialise,
    mirror_row,
    normalised_items,
    read_messages,
    read_raw,
    wait_for_stream,
)
from sync_support import wait_until

if TYPE_CHECKING:
    from sync_support import SyncProcess

TYPED = """
CREATE DOMAIN positive AS int4 CHECK (VALUE > 0);
CREATE TYPE mood AS ENUM ('sad', 'happy');
CREATE TABLE typed (
    id int4 PRIMARY KEY, small int2, big int8, flag bool, amount numeric(12, 3),
    at timestamptz, local_at timestamp, doc json, docb jsonb, raw bytea, label text,
    ratio float8, day date, uid uuid, tags text[], span interval, dom positive,
    feeling mood, code varchar(10)
);
CREATE TABLE pairs (a text, b int4, c text, note text, PRIMARY KEY (a, b, c));
CREATE TABLE big (id int4 PRIMARY KEY, note text, blob text);
CREATE TABLE nokey (a int4, b text);
"""
TYPED_ROW = """
INSERT INTO typed VALUES (%s, -3, 9007199254740993, true, 12345.678,
    '2026-11-26 10:00:00.125+02', '2026-11-26 10:00:00', '{"b": [1, 2.50, "x"], "a": null}',
    '{"b": [1, 2.50], "a": {"c": "é"}}', '\\x00ff10', 'quote '' and "double" and é',
    1.5, '2026-11-26', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{a,"b c"}', '1 day 2 hours',
    5, 'happy', 'abc')
"""
TYPED_VALUE = {
    "small": -3,
    "big": 9007199254740993,
    "flag": True,
    "amount": "12345.678",
    "at": "2026-11-26T08:00:00.125Z",
    "local_at": "2026-11-26T10:00:00Z",
    "doc": {"b": [1, 2.5, "x"], "a": None},
    "docb": {"a": {"c": "é"}, "b": [1, 2.5]},
    "raw": base64.b64encode(b"\x00\xff\x10").decode(),
    "label": 'quote \' and "double" and é',
    "ratio": "1.5",
    "day": "2026-11-26",
    "uid": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
    "tags": '{a,"b c"}',
    "span": "P1DT2H",
    "dom": 5,
    "feeling": "happy",
    "code": "abc",
}
NULL_VALUE = dict.fromkeys(TYPED_VALUE)


def setup_database(url: str, sql: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        migrate(conn)
        conn.execute(sql.encode())


def execute(url: str, *statements: str | tuple[str, tuple[Any, ...]]) -> None:
    """Each statement in its own transaction."""
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in statements:
            if isinstance(statement, tuple):
                conn.execute(statement[0].encode(), statement[1])
            else:
                conn.execute(statement.encode())


def by_type(messages: list[dict[str, Any]], type_name: str) -> list[dict[str, Any]]:
    return [m for m in changes(messages) if m["type"] == type_name]


def test_types_keys_operations_and_a_table_refused(
    sync: SyncProcess, ds_server: str, postgres_db: str
) -> None:
    for stream in ("pg-typed", "pg-pairs", "pg-big", "pg-nokey", "pg-items"):
        delete_stream(ds_server, stream)
    setup_database(postgres_db, TYPED)
    # Before ds-sync starts: these rows arrive in the first sync's snapshot.
    execute(
        postgres_db,
        (TYPED_ROW, (1,)),
        "INSERT INTO typed (id) VALUES (2)",
        "INSERT INTO pairs VALUES ('x/y', 1, 'back\\slash', 'first'), ('', 2, '/', 'second')",
    )
    sync.env["DS_SYNC__TABLES"] = "typed,pairs,big,nokey,items"
    sync.start()
    wait_for_stream(
        ds_server,
        "pg-items",
        lambda messages: controls(messages) == ["snapshot-start", "snapshot-end"],
        what="the empty items table's first sync",
    )
    blob = os.urandom(600_000).hex()  # 1.2 MB of text: TOASTed, stored out of line
    execute(
        postgres_db,
        # Streamed: the same values as row 1, decoded from the WAL this time.
        (TYPED_ROW, (3,)),
        "INSERT INTO typed (id) VALUES (4)",
        "UPDATE typed SET label = 'changed' WHERE id = 1",
        "DELETE FROM typed WHERE id = 2",
        "UPDATE pairs SET note = 'edited' WHERE b = 1",
        "UPDATE pairs SET a = 'moved/on' WHERE b = 2",  # a primary key change
        "DELETE FROM pairs WHERE b = 1",
        ("INSERT INTO big VALUES (1, 'n', %s)", (blob,)),
        "UPDATE big SET note = 'm' WHERE id = 1",  # the blob is left out of the WAL's new row
        "DELETE FROM big WHERE id = 1",
        "INSERT INTO items (title) SELECT 'bulk ' || n FROM generate_series(1, 3000) AS n",
        "UPDATE items SET body = 'all at once'",
    )
    for stream, count in (("pg-items", 6000), ("pg-big", 3), ("pg-typed", 6)):
        wait_for_stream(
            ds_server,
            stream,
            lambda messages, count=count: len(changes(messages)) == count,
            what=f"{count} changes on {stream}",
        )

    typed = read_messages(ds_server, "pg-typed")
    assert controls(typed) == ["snapshot-start", "snapshot-end"]
    assert typed[0] == {"headers": {"control": "snapshot-start"}}
    snapshot = {m["key"]: m["value"] for m in typed[1:3]}
    assert snapshot == {"1": {"id": 1, **TYPED_VALUE}, "2": {"id": 2, **NULL_VALUE}}
    streamed = by_type(typed, "typed")[2:]
    assert [(m["headers"]["operation"], m["key"]) for m in streamed] == [
        ("insert", "3"),
        ("insert", "4"),
        ("update", "1"),
        ("delete", "2"),
    ]
    assert streamed[0]["value"] == {"id": 3, **TYPED_VALUE}
    assert streamed[1]["value"] == {"id": 4, **NULL_VALUE}
    assert streamed[2]["value"] == {"id": 1, **TYPED_VALUE, "label": "changed"}
    assert streamed[2]["old_value"] == {"id": 1, **TYPED_VALUE}
    assert streamed[3]["value"] is None
    assert streamed[3]["old_value"] == {"id": 2, **NULL_VALUE}
    for message in by_type(typed, "typed"):
        headers = message["headers"]
        assert headers["txid"].isdigit()
        assert headers["timestamp"].endswith("Z")
        assert "old_value" not in message or headers["operation"] != "insert"
    # json keeps its text as written (2.50, key order); jsonb its normal form.
    raw = b"".join(read_raw(ds_server, "pg-typed"))
    assert b'{"b": [1, 2.50, "x"], "a": null}' in raw

    pairs = by_type(read_messages(ds_server, "pg-pairs"), "pairs")
    assert [(m["headers"]["operation"], m["key"]) for m in pairs] == [
        ("insert", "x\\/y/1/back\\\\slash"),
        ("insert", "/2/\\/"),
        ("update", "x\\/y/1/back\\\\slash"),
        ("delete", "/2/\\/"),  # the key changed: the old key goes ...
        ("insert", "moved\\/on/2/\\/"),  # ... and the new one comes, in one transaction
        ("delete", "x\\/y/1/back\\\\slash"),
    ]
    assert pairs[2]["old_value"]["note"] == "first"
    assert pairs[2]["value"]["note"] == "edited"
    assert pairs[3]["headers"]["txid"] == pairs[4]["headers"]["txid"]
    assert pairs[5]["old_value"] == {"a": "x/y", "b": 1, "c": "back\\slash", "note": "edited"}

    big = by_type(read_messages(ds_server, "pg-big"), "big")
    assert [m["headers"]["operation"] for m in big] == ["insert", "update", "delete"]
    assert big[0]["value"] == {"id": 1, "note": "n", "blob": blob}
    assert big[1]["value"] == {"id": 1, "note": "m", "blob": blob}
    assert big[1]["old_value"] == {"id": 1, "note": "n", "blob": blob}
    assert big[2]["old_value"] == {"id": 1, "note": "m", "blob": blob}

    items = by_type(read_messages(ds_server, "pg-items"), "items")
    inserts, updates = items[:3000], items[3000:]
    assert {m["headers"]["operation"] for m in inserts} == {"insert"}
    assert {m["headers"]["operation"] for m in updates} == {"update"}
    assert len({m["headers"]["txid"] for m in inserts}) == 1
    assert len({m["headers"]["txid"] for m in updates}) == 1
    assert normalised_items(materialise(items, "items")) == items_rows(postgres_db)

    # The table without a primary key is refused, clearly, and the others go on.
    row = wait_until(
        lambda: (r := mirror_row(postgres_db, "public.nokey")) and r["status"] == "failed" and r,
        what="nokey refused",
    )
    assert "has no primary key" in row["detail"]
    assert read_messages(ds_server, "pg-nokey") == []
    assert "table nokey is not mirrored: table public.nokey has no primary key" in sync.log()
    assert sync.log().count("table nokey is not mirrored") == 1
    assert sync.process is not None
    assert sync.process.poll() is None

    # A truncate is a reset: readers start over from what follows.
    execute(postgres_db, "TRUNCATE typed", "INSERT INTO typed (id) VALUES (9)")
    wait_for_stream(
        ds_server,
        "pg-typed",
        lambda messages: (
            controls(messages)[-1:] == ["reset"]
            and materialise(messages, "typed") == {"9": {"id": 9, **NULL_VALUE}}
        ),
        what="a reset, then the row inserted after the truncate",
    )
    for stream in ("pg-typed", "pg-pairs", "pg-big", "pg-items"):
        assert duplicates(read_messages(ds_server, stream)) == 0
    assert sync.stop() == 0


def test_random_workload_materialises_to_the_table(
    sync: SyncProcess, ds_server: str, postgres_db: str
) -> None:
    delete_stream(ds_server, "pg-items")
    setup_database(postgres_db, "")
    rng = random.Random()
    execute(
        postgres_db, "INSERT INTO items (title) SELECT 'seed ' || n FROM generate_series(1, 50) n"
    )
    sync.env["DS_SYNC__TABLES"] = "items"
    sync.start()
    with psycopg.connect(postgres_db, autocommit=True) as conn:
        for n in range(600):
            ids = [r[0] for r in conn.execute("SELECT id FROM items").fetchall()]
            roll = rng.random()
            with conn.transaction():
                for k in range(rng.randint(1, 4)):
                    # Titles differ op by op: two identical messages would be a duplicate.
                    if roll < 0.4 or not ids:
                        conn.execute(
                            "INSERT INTO items (title, body) VALUES (%s, %s)",
                            (f"t{n}.{k}", rng.choice([None, "b" * rng.randint(0, 3000)])),
                        )
                    elif roll < 0.75:
                        conn.execute(
                            "UPDATE items SET title = %s, body = %s WHERE id = %s",
                            (f"u{n}.{k}", rng.choice([None, "x"]), rng.choice(ids)),
                        )
                    else:
                        conn.execute("DELETE FROM items WHERE id = %s", (rng.choice(ids),))
        # The stream is synced once every change made so far is in it.
        expected = items_rows(postgres_db)
    messages = wait_for_stream(
        ds_server,
        "pg-items",
        lambda messages: normalised_items(materialise(messages, "items")) == expected,
        what="pg-items materialised = SELECT * FROM items",
    )
    assert controls(messages)[:2] == ["snapshot-start", "snapshot-end"]
    assert "reset" not in controls(messages)
    assert duplicates(messages) == 0
    assert sync.stop() == 0
    assert mirror_row(postgres_db, "public.items")["status"] == "active"  # type: ignore[index]

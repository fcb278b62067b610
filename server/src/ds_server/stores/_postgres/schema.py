"""The database layout of the postgres backend, created idempotently at open.

Everything lives in one Postgres schema of its own (``ds_server`` by
default), so it never meets the tables ds-sync keeps in the same database.
Connections set ``search_path`` to it, so statements name tables unqualified.

- ``meta``: the schema version (``schema_version`` row).
- ``streams``: one row per stream incarnation, everything a ``StreamState``
  holds except producers, Stream-Seq values and the snapshot; ``version`` is
  the state version writes are fenced on. ``path`` is unique: a path has at
  most one stored stream (a soft-deleted one keeps its name reserved until it
  is purged), so two processes can never both create it.
- ``producers`` / ``writer_seqs``: idempotent-producer and Stream-Seq state.
- ``chunks``: the bytes, keyed ``(stream_id, start)`` with ``start`` the byte
  offset; one row per JSON message or byte append, cut into pieces of at most
  ``PIECE_BYTES`` (``cont`` on the pieces after the first) so a paged read
  never loads a whole multi-megabyte append. Stored uncompressed (``STORAGE
  EXTERNAL``): payloads are mostly small or already compressed, and pglz
  would cost CPU on every append.
- ``snapshots``: at most one per stream, with its blob.
- ``buckets``: the /ds buckets.
- ``bucket_usage``: each bucket's running totals (``_quotas``): the bytes its
  streams retain plus their snapshots, and its streams. Every write that
  changes them updates them in its own transaction, so they always equal
  the sums over ``streams`` and ``snapshots``; a write its bucket's quota
  has no room for is refused, and changes nothing. Writers lock the rows
  of a transaction's buckets first, in order (see ``writer``).

``ds_append`` stores one append if, and only if, the stored version is the
one it was decided on (see ``writer``) and its bucket has room.

Version 1 (before quotas) had no ``bucket_usage`` and a ``ds_append``
without the quota check; opening it migrates it (``_MIGRATE_1``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, LiteralString

from psycopg import sql

if TYPE_CHECKING:
    import psycopg

SCHEMA_VERSION = 2
PIECE_BYTES = 64 * 1024

_TABLES: tuple[LiteralString, ...] = (
    """
    CREATE TABLE IF NOT EXISTS meta (
        name text PRIMARY KEY,
        value text NOT NULL
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS streams (
        stream_id text PRIMARY KEY,
        path text NOT NULL UNIQUE,
        content_type text NOT NULL,
        created_at double precision NOT NULL,
        ttl_seconds bigint,
        expires_at double precision,
        last_access double precision NOT NULL,
        tail bigint NOT NULL,
        fork_offset bigint NOT NULL,
        forked_from text,
        forked_from_id text,
        fork_requested_offset numeric,
        fork_sub_offset bigint NOT NULL,
        closed boolean NOT NULL,
        closed_by_producer text,
        closed_by_epoch bigint,
        closed_by_seq bigint,
        soft_deleted boolean NOT NULL,
        earliest_offset bigint NOT NULL,
        last_write double precision NOT NULL,
        version bigint NOT NULL
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS producers (
        stream_id text NOT NULL,
        producer_id text NOT NULL,
        epoch bigint NOT NULL,
        last_seq bigint NOT NULL,
        PRIMARY KEY (stream_id, producer_id)
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS writer_seqs (
        stream_id text NOT NULL,
        writer text NOT NULL,
        seq text NOT NULL,
        PRIMARY KEY (stream_id, writer)
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS chunks (
        stream_id text NOT NULL,
        start bigint NOT NULL,
        cont boolean NOT NULL,
        data bytea NOT NULL,
        PRIMARY KEY (stream_id, start)
    )
    """,
    "ALTER TABLE chunks ALTER COLUMN data SET STORAGE EXTERNAL",
    """
    CREATE TABLE IF NOT EXISTS snapshots (
        stream_id text PRIMARY KEY,
        stream_offset bigint NOT NULL,
        content_type text NOT NULL,
        size bigint NOT NULL,
        created_at double precision NOT NULL,
        data bytea NOT NULL
    )
    """,
    "ALTER TABLE snapshots ALTER COLUMN data SET STORAGE EXTERNAL",
    """
    CREATE TABLE IF NOT EXISTS buckets (
        bucket_id text PRIMARY KEY,
        created_at double precision NOT NULL
    )
    """,
)

# Everything since version 1: created with the tables, or added by the migration.
_QUOTAS: tuple[LiteralString, ...] = (
    """
    CREATE TABLE IF NOT EXISTS bucket_usage (
        bucket text PRIMARY KEY,
        bytes bigint NOT NULL DEFAULT 0,
        streams bigint NOT NULL DEFAULT 0
    )
    """,
    # The totals of what is stored (the first path segment is the bucket;
    # ``__`` streams belong to none): what the writes keep up to date after.
    """
    INSERT INTO bucket_usage (bucket, bytes, streams)
    SELECT split_part(s.path, '/', 1),
        sum(s.tail - s.earliest_offset + coalesce(n.size, 0)), count(*)
    FROM streams s LEFT JOIN snapshots n ON n.stream_id = s.stream_id
    WHERE left(s.path, 2) <> '__'
    GROUP BY 1
    ON CONFLICT (bucket) DO NOTHING
    """,
    "DROP FUNCTION IF EXISTS ds_append",
    # A stream's consecutive appends, fenced: nothing is written unless the
    # stored state is the one the first was decided on (version, tail, open)
    # and the bucket (NULL: none) has room for them under ``p_max_bytes``
    # (NULL: no limit); its ``bucket_usage`` row is locked by the caller.
    # Returns 0 when they were stored, 1 for a stale state, 2 for no room.
    """
    CREATE FUNCTION ds_append(
        p_stream_id text, p_from_version bigint, p_to_version bigint,
        p_start bigint, p_end bigint, p_has_data boolean,
        p_last_access double precision, p_last_write double precision,
        p_starts bigint[], p_conts boolean[], p_pieces bytea[],
        p_producers text[], p_epochs bigint[], p_seqs bigint[],
        p_writers text[], p_stream_seqs text[],
        p_close boolean, p_closer text, p_closer_epoch bigint, p_closer_seq bigint,
        p_bucket text, p_max_bytes bigint
    ) RETURNS integer LANGUAGE plpgsql AS $$
    DECLARE
        v_size bigint := p_end - p_start;
        v_counted boolean := p_bucket IS NOT NULL AND v_size > 0;
    BEGIN
        IF v_counted THEN
            UPDATE bucket_usage SET bytes = bytes + v_size
            WHERE bucket = p_bucket AND (p_max_bytes IS NULL OR bytes + v_size <= p_max_bytes);
            IF NOT FOUND THEN
                RETURN 2;
            END IF;
        END IF;
        UPDATE streams SET
            tail = p_end,
            last_access = p_last_access,
            last_write = CASE WHEN p_has_data THEN p_last_write ELSE last_write END,
            closed = closed OR p_close,
            closed_by_producer = CASE WHEN p_close THEN p_closer ELSE closed_by_producer END,
            closed_by_epoch = CASE WHEN p_close THEN p_closer_epoch ELSE closed_by_epoch END,
            closed_by_seq = CASE WHEN p_close THEN p_closer_seq ELSE closed_by_seq END,
            version = p_to_version
        WHERE stream_id = p_stream_id AND version = p_from_version - 1
            AND tail = p_start AND NOT soft_deleted
            -- A closed stream takes only a write that changes nothing (a repeated close).
            AND (NOT closed OR (p_end = p_start AND NOT p_close
                AND cardinality(p_producers) = 0 AND cardinality(p_writers) = 0));
        IF NOT FOUND THEN
            IF v_counted THEN
                UPDATE bucket_usage SET bytes = bytes - v_size WHERE bucket = p_bucket;
            END IF;
            RETURN 1;
        END IF;
        INSERT INTO chunks (stream_id, start, cont, data)
            SELECT p_stream_id, s, c, d FROM unnest(p_starts, p_conts, p_pieces) AS t(s, c, d);
        INSERT INTO producers (stream_id, producer_id, epoch, last_seq)
            SELECT p_stream_id, p, e, q FROM unnest(p_producers, p_epochs, p_seqs) AS t(p, e, q)
            ON CONFLICT (stream_id, producer_id)
            DO UPDATE SET epoch = excluded.epoch, last_seq = excluded.last_seq;
        INSERT INTO writer_seqs (stream_id, writer, seq)
            SELECT p_stream_id, w, q FROM unnest(p_writers, p_stream_seqs) AS t(w, q)
            ON CONFLICT (stream_id, writer) DO UPDATE SET seq = excluded.seq;
        RETURN 0;
    END
    $$
    """,
)


class SchemaError(RuntimeError):
    """The schema was written by an incompatible version of this backend."""


async def ensure_schema(conn: psycopg.AsyncConnection[Any], schema: str) -> None:
    """Create the schema and its tables if missing; check the version of existing ones.

    Serialized by an advisory lock, so replicas starting together don't race
    on the DDL. ``conn``'s search_path must name ``schema``.
    """
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"ds_server:{schema}",))
        await conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
        await conn.execute(_TABLES[0])
        cursor = await conn.execute("SELECT value FROM meta WHERE name = 'schema_version'")
        row = await cursor.fetchone()
        if row is not None and row[0] not in ("1", str(SCHEMA_VERSION)):
            raise SchemaError(
                f"schema {schema!r} has version {row[0]}, this server needs {SCHEMA_VERSION}"
            )
        if row is None:
            for statement in _TABLES[1:]:
                await conn.execute(statement)
        if row is None or row[0] == "1":
            # New, or written before quotas: count what is stored.
            for statement in _QUOTAS:
                await conn.execute(statement)
            await conn.execute(
                "INSERT INTO meta (name, value) VALUES ('schema_version', %s)"
                " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                (str(SCHEMA_VERSION),),
            )

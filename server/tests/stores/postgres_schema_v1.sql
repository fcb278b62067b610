-- The postgres backend's schema at version 1 (before bucket quotas), as that
-- version's ensure_schema made it: what the upgrade test opens. Do not edit.

CREATE TABLE IF NOT EXISTS meta (
    name text PRIMARY KEY,
    value text NOT NULL
);

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
);

CREATE TABLE IF NOT EXISTS producers (
    stream_id text NOT NULL,
    producer_id text NOT NULL,
    epoch bigint NOT NULL,
    last_seq bigint NOT NULL,
    PRIMARY KEY (stream_id, producer_id)
);

CREATE TABLE IF NOT EXISTS writer_seqs (
    stream_id text NOT NULL,
    writer text NOT NULL,
    seq text NOT NULL,
    PRIMARY KEY (stream_id, writer)
);

CREATE TABLE IF NOT EXISTS chunks (
    stream_id text NOT NULL,
    start bigint NOT NULL,
    cont boolean NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (stream_id, start)
);

ALTER TABLE chunks ALTER COLUMN data SET STORAGE EXTERNAL;

CREATE TABLE IF NOT EXISTS snapshots (
    stream_id text PRIMARY KEY,
    stream_offset bigint NOT NULL,
    content_type text NOT NULL,
    size bigint NOT NULL,
    created_at double precision NOT NULL,
    data bytea NOT NULL
);

ALTER TABLE snapshots ALTER COLUMN data SET STORAGE EXTERNAL;

CREATE TABLE IF NOT EXISTS buckets (
    bucket_id text PRIMARY KEY,
    created_at double precision NOT NULL
);

CREATE OR REPLACE FUNCTION ds_append(
    p_stream_id text, p_from_version bigint, p_to_version bigint,
    p_start bigint, p_end bigint, p_has_data boolean,
    p_last_access double precision, p_last_write double precision,
    p_starts bigint[], p_conts boolean[], p_pieces bytea[],
    p_producers text[], p_epochs bigint[], p_seqs bigint[],
    p_writers text[], p_stream_seqs text[],
    p_close boolean, p_closer text, p_closer_epoch bigint, p_closer_seq bigint
) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
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
        RETURN false;
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
    RETURN true;
END
$$;

INSERT INTO meta (name, value) VALUES ('schema_version', '1');

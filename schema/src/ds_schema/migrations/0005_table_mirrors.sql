-- Postgres → stream (shared/spec/sessions.md §4): per mirrored table, where
-- its change feed stands and its idempotent producer's epoch and next seq.
-- The position and next_seq only ever move together, in one transaction.
CREATE TABLE sync_mirrors (
    table_name text PRIMARY KEY,  -- schema.table
    stream text NOT NULL,
    feed text NOT NULL CHECK (feed IN ('native', 'electric')),
    producer_id text NOT NULL,
    producer_epoch bigint NOT NULL,
    next_seq bigint NOT NULL DEFAULT 0,
    -- The feed's place after everything delivered; null: not synced yet.
    position jsonb,
    -- Set while a batch waits in sync_mirror_outbox: the place once it is delivered.
    pending_position jsonb,
    -- active: mirrored (or retrying); failed: stopped or refused, see detail.
    status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'failed')),
    detail text,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- The batch being delivered: its POST bodies and their Producer-Seq, written
-- before the first POST and deleted when the position moves. After a crash
-- they are sent again exactly as they were; the server answers 204 to those
-- it has, so a batch is appended once whatever the feed reads after a restart.
CREATE TABLE sync_mirror_outbox (
    table_name text NOT NULL REFERENCES sync_mirrors ON DELETE CASCADE,
    seq bigint NOT NULL,
    body bytea NOT NULL,
    PRIMARY KEY (table_name, seq)
);

-- Updates and deletes of items carry the whole old row (the native feed's old_value).
ALTER TABLE items REPLICA IDENTITY FULL;

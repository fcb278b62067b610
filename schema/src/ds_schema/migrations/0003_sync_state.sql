-- Per stream: where the next read starts (everything before it is in
-- session_events), written in the same transaction as the rows.
CREATE TABLE sync_checkpoints (
    stream_name text PRIMARY KEY,
    next_offset text NOT NULL,
    -- active: synced (reading, or waiting for a wake); done: closed and fully
    -- synced; deleted: the stream is gone; failed: stopped, see detail.
    status text NOT NULL DEFAULT 'active'
        CHECK (status IN ('active', 'done', 'deleted', 'failed')),
    -- The stream's creation time from its bucket listing: a stream deleted and
    -- created again under the same name is told apart by it.
    stream_created_ms bigint,
    detail text,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- History that left a stream (a snapshot dropped it) before it was synced:
-- the rows between from_offset and to_offset are missing, on purpose and on record.
CREATE TABLE sync_gaps (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    stream_name text NOT NULL,
    from_offset text NOT NULL,
    to_offset text NOT NULL,
    detected_at timestamptz NOT NULL DEFAULT now(),
    detail text
);

-- Stream → Postgres: one row per stream message (shared/spec/sessions.md §3).
-- (stream_name, ds_offset, event_index) is the message's place in its stream;
-- the checkpoint is what makes every row arrive once, this key only guards it.
CREATE TABLE session_events (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    stream_name text NOT NULL,
    ds_offset text NOT NULL,
    event_index integer NOT NULL,
    event_key text,
    event_type text,
    operation text,
    event_time timestamptz,
    payload jsonb NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT session_events_position_key UNIQUE (stream_name, ds_offset, event_index)
);

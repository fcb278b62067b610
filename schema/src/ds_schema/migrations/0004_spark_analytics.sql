-- ds-spark's analytics tables (shared/spec/sessions.md §3, §5), written by
-- `ds-spark analytics` and upserted by their keys: a rerun replaces rows, never duplicates.
CREATE TABLE session_analytics (
    session text PRIMARY KEY,
    events bigint NOT NULL,
    first_event_at timestamptz,
    last_event_at timestamptz,
    duration_s double precision,
    participants bigint NOT NULL,
    peak_online bigint NOT NULL,
    user_messages bigint NOT NULL,
    assistant_messages bigint NOT NULL,
    chunks bigint NOT NULL,
    reactions bigint NOT NULL,
    first_token_latency_p50_ms double precision,
    first_token_latency_p95_ms double precision
);

CREATE TABLE daily_session_rollup (
    day date PRIMARY KEY,
    sessions bigint NOT NULL,
    events bigint NOT NULL,
    participants bigint NOT NULL,
    first_token_latency_p50_ms double precision,
    first_token_latency_p95_ms double precision
);

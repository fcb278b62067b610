"""The names and types of the analytics tables (sessions.md §3, §5): the interface, kept once.

The operation kinds they count by (§2) are the SDK's, `durable_sessions.sessions.fields`."""

from __future__ import annotations

SESSION_COLUMNS = (
    "session",
    "events",
    "first_event_at",
    "last_event_at",
    "duration_s",
    "participants",
    "peak_online",
    "user_messages",
    "assistant_messages",
    "chunks",
    "reactions",
    "first_token_latency_p50_ms",
    "first_token_latency_p95_ms",
)
DAILY_COLUMNS = (
    "day",
    "sessions",
    "events",
    "participants",
    "first_token_latency_p50_ms",
    "first_token_latency_p95_ms",
)
SESSION_TABLE = "session_analytics"
DAILY_TABLE = "daily_session_rollup"
SESSION_KEY = "session"
DAILY_KEY = "day"

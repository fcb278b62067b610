"""Generated sessions written through a real ds-server and synced by a real ds-sync."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import psycopg
from durable_sessions.protocol.offsets import parse_offset
from spark_support import append_batch, create_stream
from sync_support import wait_until

if TYPE_CHECKING:
    from sync_support import SyncProcess


def write_sessions(server_url: str, bucket: str, sessions: dict[str, list[Any]]) -> dict[str, int]:
    """Create and fill each session's stream, a few messages per append; the tails."""
    tails = {}
    for name, messages in sessions.items():
        url = f"{server_url}/ds/{bucket}/{name}"
        create_stream(url)
        tail = 0
        for start in range(0, len(messages), 7):
            tail = parse_offset(append_batch(url, messages[start : start + 7]))
        tails[f"{bucket}/{name}"] = tail
    return tails


def append_sessions(server_url: str, bucket: str, more: dict[str, list[Any]]) -> dict[str, int]:
    """Append to existing sessions; their new tails."""
    return {
        f"{bucket}/{name}": parse_offset(append_batch(f"{server_url}/ds/{bucket}/{name}", msgs))
        for name, msgs in more.items()
        if msgs
    }


def wait_synced(sync: SyncProcess, postgres_url: str, tails: dict[str, int]) -> None:
    """Until ds-sync's checkpoint of every stream has reached its tail."""

    def caught_up() -> bool:
        with psycopg.connect(postgres_url) as conn:
            rows = dict(
                conn.execute("SELECT stream_name, next_offset FROM sync_checkpoints").fetchall()
            )
        return all(
            tail == 0 or (path in rows and parse_offset(rows[path]) >= tail)
            for path, tail in tails.items()
        )

    wait_until(caught_up, timeout=120, what=f"ds-sync to catch up (log {sync.log_path})")


def stored_payloads(postgres_url: str) -> dict[str, list[Any]]:
    """Every session_events payload, per stream, in stream order."""
    with psycopg.connect(postgres_url) as conn:
        rows = conn.execute(
            "SELECT stream_name, payload FROM session_events "
            "ORDER BY stream_name, ds_offset, event_index"
        ).fetchall()
    result: dict[str, list[Any]] = {}
    for stream, payload in rows:
        result.setdefault(stream, []).append(payload)
    return result

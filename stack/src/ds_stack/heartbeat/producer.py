"""The reference stack's heartbeat: both sync directions exercised every few seconds.

Odd ticks insert a row into ``items`` (ds-sync mirrors it to ``pg-items``);
even ticks append a session event to ``session-events`` (ds-sync copies it
into ``session_events``). What it leaves behind stays small however long it
runs: it deletes its rows beyond the newest ``keep`` and reuses ``keep``
message keys, so ``items``, the ``pg-items`` mirror's state and
``session-events``' snapshot stay bounded (their history lives on in
Postgres and leaves the streams with compaction and snapshots). Appends
carry idempotent-producer headers, and an append whose answer was lost is
sent again with the same sequence number before any new one, so a retry
never doubles an event. A tick that fails (Postgres or the server
restarting) is logged and the next one tries again.
"""

from __future__ import annotations

import json
import os
import socket
import ssl
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import httpx
import psycopg
from durable_sessions.tokens import token_auth

if TYPE_CHECKING:
    import threading

    from ds_stack.heartbeat.settings import Settings

JSON = "application/json"
# The heartbeat's own rows (its titles), all but the newest N.
_TRIM_ITEMS = """
DELETE FROM items WHERE title LIKE 'heartbeat %%' AND id <= (
    SELECT id FROM items WHERE title LIKE 'heartbeat %%' ORDER BY id DESC OFFSET %s LIMIT 1
)
"""
_REQUEST_SECS = 10.0


@dataclass(frozen=True, slots=True)
class Pending:
    """An append not yet acknowledged: sent again, unchanged, until it is."""

    seq: int
    body: bytes


def now_rfc3339() -> str:
    """The current UTC time, RFC 3339 with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def session_event(producer_id: str, tick: int, keep: int) -> dict[str, object]:
    """A State Protocol message event (sessions.md §2) for ``tick``, on one of ``keep`` keys."""
    return {
        "type": "message",
        # An insert of a key that exists is an upsert (sessions.md §2).
        "key": f"msg:{producer_id}-{tick // 2 % keep}",
        "value": {"role": "system", "text": f"heartbeat {tick}", "author": "producer:heartbeat"},
        "headers": {"operation": "insert", "timestamp": now_rfc3339()},
    }


class Heartbeat:
    """Ticks until ``stop`` is set; prints one line per tick."""

    def __init__(self, settings: Settings, stop: threading.Event) -> None:
        self.settings = settings
        self.stop = stop
        self.stream_url = f"{settings.server_url}/v1/stream/{settings.stream}"
        # A token file is read again when it changes, and after a 401.
        self.http = httpx.Client(
            headers={"Content-Type": JSON},
            auth=token_auth(settings.token_source),
            timeout=_REQUEST_SECS,
            trust_env=False,
            verify=_trusted(),
        )
        self.producer_id = f"heartbeat-{socket.gethostname()}"
        # A new epoch per run (the server fences older ones); seq counts from 0 in it.
        self.epoch = int(time.time())
        self.next_seq = 0
        self.pending: Pending | None = None
        self.stream_ready = False

    def run(self) -> None:
        """Tick every ``interval_secs`` (the first at once) until stopped."""
        tick = 0
        ready = False
        while not self.stop.is_set():
            tick += 1
            try:
                line = self.insert_item(tick) if tick % 2 else self.append_event(tick)
            except (httpx.HTTPError, psycopg.Error, HeartbeatError) as exc:
                line = f"failed: {exc}"
            print(f"heartbeat: tick {tick}: {line}", flush=True)
            if not ready and not line.startswith("failed"):
                ready = True
                print("heartbeat: ready", flush=True)
            self.stop.wait(self.settings.interval_secs)
        self.http.close()

    def insert_item(self, tick: int) -> str:
        """Odd tick: one row into ``items``, and its rows beyond the newest ``keep`` out."""
        with psycopg.connect(self.settings.postgres_url, autocommit=True, connect_timeout=5) as db:
            row = db.execute(
                "INSERT INTO items (title, body) VALUES (%s, %s) RETURNING id",
                (f"heartbeat {tick}", f"tick {tick} at {now_rfc3339()}"),
            ).fetchone()
            assert row is not None
            deleted = db.execute(_TRIM_ITEMS, (self.settings.keep,)).rowcount
        return f"inserted items id={row[0]}" + (f", deleted {deleted}" if deleted > 0 else "")

    def append_event(self, tick: int) -> str:
        """Even tick: the pending append if there is one, else a new session event."""
        self._ensure_stream()
        if self.pending is None:
            event = session_event(self.producer_id, tick, self.settings.keep)
            body = json.dumps(event).encode()
            self.pending = Pending(self.next_seq, body)
            self.next_seq += 1
        pending = self.pending
        response = self.http.post(
            self.stream_url,
            content=pending.body,
            headers={
                "Producer-Id": self.producer_id,
                "Producer-Epoch": str(self.epoch),
                "Producer-Seq": str(pending.seq),
            },
        )
        if response.status_code == 404:
            self.stream_ready = False  # deleted under us: the next even tick creates it again
        if response.status_code not in (200, 204):
            raise HeartbeatError(f"POST {self.settings.stream}: {_describe(response)}")
        self.pending = None
        duplicate = " (a retry the server had already)" if response.status_code == 204 else ""
        return f"appended to {self.settings.stream} seq={pending.seq}{duplicate}"

    def _ensure_stream(self) -> None:
        if self.stream_ready:
            return
        response = self.http.put(self.stream_url)
        if response.status_code not in (200, 201):
            raise HeartbeatError(f"PUT {self.settings.stream}: {_describe(response)}")
        self.stream_ready = True


class HeartbeatError(RuntimeError):
    """The server refused a request."""


def _trusted() -> ssl.SSLContext | bool:
    """Certificates to trust: ``SSL_CERT_FILE`` when set (a local gateway's, ``make dev TLS=1``)."""
    cafile = os.environ.get("SSL_CERT_FILE")
    return ssl.create_default_context(cafile=cafile) if cafile else True


def _describe(response: httpx.Response) -> str:
    return f"{response.status_code} {response.text.strip()[:200]}"

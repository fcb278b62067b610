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

Appends go through the SDK's ``IdempotentProducer`` in a new epoch per
run: it resends an append whose answer was lost, unchanged (same epoch and
seq), until the server acknowledges it, and the heartbeat appends nothing
new before that; an append the server refused (the stream was deleted, the
token was refused) is appended again, once the stream exists, in a new epoch.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import ssl
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import httpx
import psycopg
from durable_sessions import DurableStreamError, IdempotentProducer, RetryPolicy, create
from durable_sessions.protocol import JSON, stream_url

if TYPE_CHECKING:
    import threading

    from ds_stack.heartbeat.settings import Settings

# The heartbeat's own rows (its titles), all but the newest N.
_TRIM_ITEMS = """
DELETE FROM items WHERE title LIKE 'heartbeat %%' AND id <= (
    SELECT id FROM items WHERE title LIKE 'heartbeat %%' ORDER BY id DESC OFFSET %s LIMIT 1
)
"""
_REQUEST_SECS = 10.0

# How often a tick looks whether its append was acknowledged.
_POLL_SECS = 0.02


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
        self.stream_url = stream_url(settings.server_url, settings.stream)
        self.producer_id = f"heartbeat-{socket.gethostname()}"
        # A new epoch per run (the server fences older ones); seq counts from 0 in it.
        # Never given up on: an append is resent, unchanged, until acknowledged.
        # A token file is read again when it changes, and after a 401.
        self.producer = IdempotentProducer(
            self.stream_url,
            self.producer_id,
            epoch=int(time.time()),
            linger_ms=0,
            max_in_flight=1,
            content_type=JSON,
            token=settings.token_source,
            retry=RetryPolicy(give_up_after_secs=None),
            verify=_trusted(),
        )
        self.refused: bytes | None = None  # an event the server refused: appended again
        self.stream_ready = False

    def run(self) -> None:
        """Tick every ``interval_secs`` (the first at once) until stopped."""
        tick = 0
        ready = False
        while not self.stop.is_set():
            tick += 1
            try:
                line = self.insert_item(tick) if tick % 2 else self.append_event(tick)
            except (httpx.HTTPError, DurableStreamError, psycopg.Error, HeartbeatError) as exc:
                line = f"failed: {exc}"
            print(f"heartbeat: tick {tick}: {line}", flush=True)
            if not ready and not line.startswith("failed"):
                ready = True
                print("heartbeat: ready", flush=True)
            self.stop.wait(self.settings.interval_secs)
        if self._acknowledged():
            self.producer.detach()
        # Otherwise an append is still being retried: the process ends without it, as it
        # would on a crash (the next run writes in a newer epoch).

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
        """Even tick: a new session event, once the one before it is acknowledged."""
        if not self._wait_acknowledged():
            raise HeartbeatError(
                f"POST {self.settings.stream}: not acknowledged within {_REQUEST_SECS:g} s; "
                "retrying it"
            )
        self._ensure_stream()
        producer = self.producer
        event = session_event(self.producer_id, tick, self.settings.keep)
        body = self.refused or json.dumps(event).encode()
        epoch, seq = producer.epoch, producer.next_seq
        producer.append(body)
        if not self._wait_acknowledged():
            raise HeartbeatError(
                f"POST {self.settings.stream} seq={seq}: not acknowledged within "
                f"{_REQUEST_SECS:g} s; retrying it"
            )
        try:
            producer.flush()  # raises the refusal, if the server refused it
        except DurableStreamError as exc:
            self.refused = body
            if exc.status == 404:
                self.stream_ready = False  # deleted under us: the next even tick creates it
            producer.restart()  # a new epoch, seq 0: the refused event goes again there
            raise
        self.refused = None
        return (
            f"appended to {self.settings.stream} epoch={epoch} seq={seq}, "
            f"next offset {producer.last_successful_offset}"
        )

    def _acknowledged(self) -> bool:
        return self.producer.pending_count == 0 and self.producer.in_flight_count == 0

    def _wait_acknowledged(self) -> bool:
        """Whether every append is answered, waiting up to ``_REQUEST_SECS`` (not past stop)."""
        deadline = time.monotonic() + _REQUEST_SECS
        while not self._acknowledged():
            if time.monotonic() > deadline or self.stop.wait(_POLL_SECS):
                return self._acknowledged()
        return True

    def _ensure_stream(self) -> None:
        if self.stream_ready:
            return
        asyncio.run(self._create())
        self.stream_ready = True

    async def _create(self) -> None:
        async with httpx.AsyncClient(
            timeout=_REQUEST_SECS, trust_env=False, verify=_trusted()
        ) as http:
            await create(
                self.stream_url, content_type=JSON, client=http, token=self.settings.token_source
            )


class HeartbeatError(RuntimeError):
    """The server refused a request."""


def _trusted() -> ssl.SSLContext | bool:
    """Certificates to trust: ``SSL_CERT_FILE`` when set (a local gateway's, ``make dev TLS=1``)."""
    cafile = os.environ.get("SSL_CERT_FILE")
    return ssl.create_default_context(cafile=cafile) if cafile else True

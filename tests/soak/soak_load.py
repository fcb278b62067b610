"""The soak test's load: session writers, the items churn, and late readers of pg-items.

Every writer is a thread of the test process talking to the stack through
the gateway, as clients do, counting what was acknowledged and what was
refused. The following readers (``Follower``, the official ``NodeReader``)
and the table's expected rows are the sync tests' (``sync/tests/mirror_support.py``).
"""

from __future__ import annotations

import json
import random
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx
import psycopg
from durable_sessions import parse_bootstrap
from mirror_support import materialise

JSON = "application/json"
# Keys a session writer reuses: a session's state (its snapshot) stays bounded, as a
# real session's would, while every event stays distinct by its ``n``.
SESSION_KEYS = 50


class SessionWriter(threading.Thread):
    """Appends session events of about ``event_bytes`` to one stream, ``rate`` a second,
    as an idempotent producer: a request whose answer was lost is sent again unchanged."""

    def __init__(self, base: str, token: str, stream: str, rate: float, event_bytes: int) -> None:
        super().__init__(daemon=True, name=f"writer {stream}")
        self.url = f"{base}/v1/stream/{stream}"
        self.stream = stream
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": JSON}
        self.period = 1.0 / rate
        self.pad = "x" * max(0, event_bytes - 220)
        self.written = 0  # events acknowledged
        self.refused: list[str] = []
        self.stopping = threading.Event()
        self.error: BaseException | None = None

    def event(self, n: int) -> bytes:
        return json.dumps(
            {
                "type": "message",
                "key": f"msg:soak-{n % SESSION_KEYS}",
                "value": {"role": "user", "text": self.pad, "author": "soak", "n": n},
                "headers": {"operation": "insert", "timestamp": _now()},
            }
        ).encode()

    def run(self) -> None:
        try:
            with httpx.Client(timeout=30) as http:
                assert http.put(self.url, headers=self.headers).status_code in (200, 201)
                epoch, n = int(time.time()), 0
                next_at = time.monotonic()
                while not self.stopping.is_set():
                    producer = {
                        "Producer-Id": f"soak-{self.stream}",
                        "Producer-Epoch": str(epoch),
                        "Producer-Seq": str(n),
                    }
                    if self._send(http, self.event(n), producer):
                        self.written += 1
                    n += 1
                    next_at += self.period
                    self.stopping.wait(max(0.0, next_at - time.monotonic()))
        except BaseException as exc:  # reported by stop()
            self.error = exc

    def _send(self, http: httpx.Client, body: bytes, producer: dict[str, str]) -> bool:
        while True:
            try:
                response = http.post(self.url, content=body, headers={**self.headers, **producer})
            except httpx.TransportError:
                time.sleep(0.2)
                continue  # the same seq: the server keeps it once
            if response.status_code in (200, 204):
                return True
            if response.status_code >= 500 or response.status_code == 429:
                time.sleep(0.2)
                continue
            self.refused.append(f"{response.status_code} {response.text.strip()[:120]}")
            return False

    def stop(self) -> None:
        self.stopping.set()
        self.join(timeout=60)
        if self.error is not None:
            raise self.error


class Churn(threading.Thread):
    """Inserts, updates and deletes over a small ``items`` table, ``rate`` transactions a second."""

    def __init__(self, postgres_url: str, rate: float, rows: int, body_bytes: int) -> None:
        super().__init__(daemon=True, name="items churn")
        self.postgres_url = postgres_url
        self.period = 1.0 / rate
        self.rows = rows
        self.body_bytes = body_bytes
        self.changed = 0
        self.stopping = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        rng = random.Random(27)
        try:
            with psycopg.connect(self.postgres_url, autocommit=True) as conn:
                n = 0
                next_at = time.monotonic()
                while not self.stopping.is_set():
                    with conn.transaction():
                        for _ in range(rng.randint(1, 4)):
                            n += 1
                            self.changed += self._change(conn, rng, n)
                    next_at += self.period
                    self.stopping.wait(max(0.0, next_at - time.monotonic()))
        except BaseException as exc:  # reported by stop()
            self.error = exc

    def _change(self, conn: psycopg.Connection[Any], rng: random.Random, n: int) -> int:
        ids = [row[0] for row in conn.execute("SELECT id FROM items WHERE title LIKE 'soak %'")]
        body = "b" * rng.randint(self.body_bytes // 2, self.body_bytes)
        roll = rng.random()
        if len(ids) < self.rows // 2 or (roll < 0.3 and len(ids) < self.rows):
            conn.execute("INSERT INTO items (title, body) VALUES (%s, %s)", (f"soak {n}", body))
            return 1
        if roll < 0.85:
            query = "UPDATE items SET title = %s, body = %s WHERE id = %s"
            return conn.execute(query, (f"soak {n}", body, rng.choice(ids))).rowcount
        return conn.execute("DELETE FROM items WHERE id = %s", (rng.choice(ids),)).rowcount

    def stop(self) -> None:
        self.stopping.set()
        self.join(timeout=60)
        if self.error is not None:
            raise self.error


@dataclass
class LateReads:
    """What each late reader of pg-items saw: its bootstrap's bytes, the table's, the time."""

    bootstrap_bytes: list[int] = field(default_factory=list)
    table_bytes: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)


def late_read(base: str, token: str, stream: str) -> tuple[dict[str, Any], int, float]:
    """A reader joining now: the bootstrap materialised; its state, size and duration."""
    started = time.monotonic()
    with httpx.Client(timeout=60, headers={"Authorization": f"Bearer {token}"}) as http:
        response = http.get(f"{base}/v1/stream/{stream}/bootstrap")
    assert response.status_code == 200, response.text
    begun = parse_bootstrap(response.headers["content-type"], response.content, response.headers)
    messages = [] if begun.snapshot is None else list(json.loads(begun.snapshot))
    messages += [json.loads(body) for _, body in begun.messages]
    return materialise(messages, "items"), len(response.content), time.monotonic() - started


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")

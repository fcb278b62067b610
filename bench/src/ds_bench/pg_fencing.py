"""What fencing costs the postgres backend: ``ds_append`` against the same writes unchecked.

One transaction per round, each appending 100 bytes to every one of 64
streams, pipelined as the backend's writer does: once through the fenced
``ds_append`` (version, tail and closure checked), once as the three plain
statements (chunk, producer, stream row) an unfenced backend would need. Commits run with
``synchronous_commit=off``, so the figures are the statements' own cost, not
the WAL flush both variants share.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import psycopg
from ds_server.stores._commit import AppendCommit
from ds_server.stores._postgres import schema
from ds_server.stores._postgres.writer import _APPEND, _params
from ds_server.stores.base import ProducerClaim

STREAMS = 64
ROUNDS = 200
PAYLOAD = b"x" * 100

_PLAIN_CHUNK = "INSERT INTO chunks (stream_id, start, cont, data) VALUES (%s, %s, false, %s)"
_PLAIN_PRODUCER = (
    "INSERT INTO producers (stream_id, producer_id, epoch, last_seq) VALUES (%s, 'p', 0, %s)"
    " ON CONFLICT (stream_id, producer_id) DO UPDATE SET last_seq = excluded.last_seq"
)
_PLAIN_STREAM = (
    "UPDATE streams SET tail = %s, version = %s, last_access = %s, last_write = %s"
    " WHERE stream_id = %s"
)


async def _setup(conn: psycopg.AsyncConnection[Any], name: str) -> None:
    await schema.ensure_schema(conn, name)
    await conn.execute(
        "INSERT INTO streams SELECT 's' || i, 'p' || i, 'application/octet-stream', 0, NULL,"
        " NULL, 0, 0, 0, NULL, NULL, NULL, 0, false, NULL, NULL, NULL, false, 0, 0, 0"
        " FROM generate_series(1, %s) AS i",
        (STREAMS,),
    )


async def _fenced(conn: psycopg.AsyncConnection[Any], round_: int) -> None:
    start = round_ * len(PAYLOAD)
    params = [
        _params(
            [
                AppendCommit(
                    f"s{i}",
                    start,
                    (PAYLOAD,),
                    len(PAYLOAD),
                    ProducerClaim("p", 0, round_),
                    "",
                    None,
                    False,
                    1.0,
                    round_ + 1,
                )
            ]
        )
        for i in range(1, STREAMS + 1)
    ]
    async with conn.transaction(), conn.cursor() as cursor:
        await cursor.executemany(_APPEND, params, returning=True)
        while True:
            row = await cursor.fetchone()
            assert row is not None
            assert row[0], "a fenced append was refused"
            if not cursor.nextset():
                break


async def _plain(conn: psycopg.AsyncConnection[Any], round_: int) -> None:
    start = round_ * len(PAYLOAD)
    ids = [f"s{i}" for i in range(1, STREAMS + 1)]
    async with conn.transaction(), conn.cursor() as cursor:
        await cursor.executemany(_PLAIN_CHUNK, [(sid, start, PAYLOAD) for sid in ids])
        await cursor.executemany(_PLAIN_PRODUCER, [(sid, round_) for sid in ids])
        await cursor.executemany(
            _PLAIN_STREAM, [(start + len(PAYLOAD), round_ + 1, 1.0, 1.0, sid) for sid in ids]
        )


async def _time(url: str, variant: str) -> float:
    """Microseconds per append of ``variant`` (``fenced`` or ``plain``)."""
    name = f"fencing_{uuid.uuid4().hex[:8]}"
    options = f"-c search_path={name} -c synchronous_commit=off"
    async with await psycopg.AsyncConnection.connect(url, autocommit=True, options=options) as conn:
        await _setup(conn, name)
        step = _fenced if variant == "fenced" else _plain
        started = time.perf_counter()
        for round_ in range(ROUNDS):
            await step(conn, round_)
        elapsed = time.perf_counter() - started
        await conn.execute(
            psycopg.sql.SQL("DROP SCHEMA {} CASCADE").format(psycopg.sql.Identifier(name))
        )
    return elapsed / (ROUNDS * STREAMS) * 1e6


def report(url: str) -> str:
    """Both variants, best of three runs each, as one line each."""
    lines = []
    for variant in ("plain", "fenced"):
        best = min(asyncio.run(_time(url, variant)) for _ in range(3))
        lines.append(f"{variant}: {best:.1f} µs per append ({STREAMS} streams per transaction)")
    return "\n".join(lines)

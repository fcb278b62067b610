"""Synthetic session events for the benchmark, written as Parquet in the reader schema.

Sessions of 40 events: presence joins and leaves, user messages answered
by assistant chunks, reactions, typing, about 5 % without a time. Built
with NumPy in slices, so generating 5 million events needs little memory.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

if TYPE_CHECKING:
    from pathlib import Path

EVENTS_PER_SESSION = 40
SLICE = 500_000
START = datetime(2026, 11, 1, tzinfo=UTC)
_SCHEMA = pa.schema(
    [
        ("stream", pa.string()),
        ("offset", pa.string()),
        ("event_index", pa.int32()),
        ("type", pa.string()),
        ("key", pa.string()),
        ("operation", pa.string()),
        ("event_time", pa.timestamp("us", tz="UTC")),
        ("payload", pa.string()),
    ]
)
# position in session -> (type, operation, role); the rest of each session repeats the cycle.
_CYCLE = [
    ("presence", "set", None),
    ("message", "insert", "user"),
    ("chunk", "append", "assistant"),
    ("chunk", "append", "assistant"),
    ("message", "insert", "assistant"),
    ("reaction", "set", None),
    ("typing", "set", None),
    ("presence", "update", None),
    ("message", "update", "user"),
    ("reaction", "delete", None),
]


def write_events(path: Path, events: int, seed: int = 1) -> None:
    """``events`` events as one Parquet file at ``path``."""
    rng = np.random.default_rng(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    with pq.ParquetWriter(path, _SCHEMA) as writer:
        for first in range(0, events, SLICE):
            writer.write_table(_slice(rng, first, min(events, first + SLICE)))


def _slice(rng: np.random.Generator, first: int, end: int) -> pa.Table:
    index = np.arange(first, end)
    session, position = index // EVENTS_PER_SESSION, index % EVENTS_PER_SESSION
    step = (position + rng.integers(0, 3, len(index))) % len(_CYCLE)
    user = rng.integers(0, 5, len(index))
    exchange = position // len(_CYCLE)
    status = rng.choice(["online", "away", "offline"], len(index), p=[0.7, 0.2, 0.1])
    base_us = int(START.timestamp() * 1e6)
    # Sessions start over 30 days; events 0.1-2 s apart.
    start_us = base_us + (session * 7919 % (30 * 86400)) * 1_000_000
    time_us = start_us + position * 1_000_000 + rng.integers(0, 900_000, len(index))
    timed = rng.random(len(index)) >= 0.05
    streams, types, keys, operations, payloads = [], [], [], [], []
    for i in range(len(index)):
        kind, operation, role = _CYCLE[step[i]]
        stream = f"sessions/s{session[i]}"
        if kind in ("presence", "typing"):
            key = f"user:{user[i]}"
            value = f'{{"status":"{status[i]}"}}' if kind == "presence" else "{}"
        elif kind == "reaction":
            key = f"reaction:{exchange[i]}:u{user[i]}:+1"
            value = '{"emoji":"+1"}'
        else:
            key = f"msg:{exchange[i]}{'a' if role == 'assistant' else 'u'}"
            value = f'{{"role":"{role}","text":"t"}}'
        streams.append(stream)
        types.append(kind)
        keys.append(key)
        operations.append(operation)
        payloads.append(
            f'{{"type":"{kind}","key":"{key}","operation":"{operation}","value":{value}}}'
        )
    offsets = [str(p * 100).zfill(20) for p in position]
    return pa.table(
        {
            "stream": streams,
            "offset": offsets,
            "event_index": np.zeros(len(index), dtype=np.int32),
            "type": types,
            "key": keys,
            "operation": operations,
            "event_time": pa.array(
                np.where(timed, time_us, 0), pa.timestamp("us", tz="UTC"), mask=~timed
            ),
            "payload": payloads,
        },
        schema=_SCHEMA,
    )

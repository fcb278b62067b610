"""sessions.md §2, §5 and §6 in plain Python, written apart from ds_spark: the answer key.

Test-only. It shares no code with the Spark jobs (not even the §2
normalisation), so a misreading of the spec in one shows up as a
difference from the other.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import numpy as np

_RFC3339 = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(\.\d+)?([Zz]|[+-]\d\d:\d\d)?", re.ASCII
)
UPSERTS = {"set", "insert", "update"}
DELETES = {"remove", "delete"}


@dataclass(frozen=True)
class Norm:
    type: str | None
    key: str | None
    operation: str | None
    time: datetime | None
    value: Any


def parse_time(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    m = _RFC3339.fullmatch(text)
    if not m:
        return None
    fraction = (m.group(7) or ".")[1:7].ljust(6, "0")
    zone = m.group(8)
    minutes = 0
    if zone and zone not in ("Z", "z"):
        hh, mm = int(zone[1:3]), int(zone[4:6])
        if mm >= 60 or hh * 60 + mm > 18 * 60:
            return None
        minutes = (hh * 60 + mm) * (1 if zone[0] == "+" else -1)
    try:
        parts = [int(m.group(i)) for i in range(1, 7)]
        local = datetime(*parts, int(fraction), tzinfo=timezone(timedelta(minutes=minutes)))
        return local.astimezone(UTC).replace(tzinfo=None)
    except (ValueError, OverflowError):
        return None


def normalise(message: Any) -> Norm:
    if not isinstance(message, dict):
        return Norm(None, None, None, None, None)
    headers = message["headers"] if isinstance(message.get("headers"), dict) else {}

    def pick(name: str) -> Any:
        return headers[name] if headers.get(name) is not None else message.get(name)

    time = parse_time(pick("timestamp"))
    type_, key = pick("type"), pick("key")
    if not (isinstance(type_, str) and isinstance(key, str)):
        return Norm(None, None, None, time, message.get("value"))
    operation = pick("operation")
    return Norm(
        type_, key, operation if isinstance(operation, str) else None, time, message.get("value")
    )


def _field(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, dict) else None


def session_row(session: str, messages: list[Any]) -> tuple[dict[str, Any], list[float], set[str]]:
    """The session's §5 row, its latencies in ms, and its presence-upsert keys."""
    events = [normalise(m) for m in messages]
    times = [e.time for e in events if e.time is not None]
    participants: set[str] = set()
    online: dict[str, bool] = {}
    peak = 0
    users: set[str] = set()
    assistants: set[str] = set()
    chunks = 0
    reactions: dict[str, bool] = {}
    first_upsert_seen: set[str] = set()
    pending_users: list[datetime] = []  # user messages still waiting for their answer
    latencies: list[float] = []
    for e in events:
        upsert, delete = e.operation in UPSERTS, e.operation in DELETES
        role = _field(e.value, "role")
        if e.type == "presence" and (upsert or delete):
            if upsert:
                participants.add(e.key)  # type: ignore[arg-type]
            online[e.key] = upsert and _field(e.value, "status") != "offline"  # type: ignore[index]
            peak = max(peak, sum(online.values()))
        if e.type == "message" and upsert and role == "user":
            users.add(e.key)  # type: ignore[arg-type]
        if (e.type == "message" and upsert and role == "assistant") or (
            e.type == "chunk" and e.operation == "append"
        ):
            assistants.add(e.key)  # type: ignore[arg-type]
        if e.type == "chunk" and e.operation == "append":
            chunks += 1
        if e.type == "reaction" and (upsert or delete):
            reactions[e.key] = upsert  # type: ignore[index]
        # An answer first, so that a message is never its own answer.
        is_answer = (
            (e.type == "message" and upsert) or (e.type == "chunk" and e.operation == "append")
        ) and role == "assistant"
        if is_answer and e.time is not None:
            latencies += [(e.time - asked) / timedelta(milliseconds=1) for asked in pending_users]
            pending_users = []
        if e.type == "message" and upsert and e.key not in first_upsert_seen:
            first_upsert_seen.add(e.key)  # type: ignore[arg-type]
            if role == "user" and e.time is not None:
                pending_users.append(e.time)
    first = min(times) if times else None
    last = max(times) if times else None
    row = {
        "session": session,
        "events": len(events),
        "first_event_at": first,
        "last_event_at": last,
        "duration_s": None if first is None else (last - first) / timedelta(seconds=1),  # type: ignore[operator]
        "participants": len(participants),
        "peak_online": peak,
        "user_messages": len(users),
        "assistant_messages": len(assistants),
        "chunks": chunks,
        "reactions": sum(reactions.values()),
        "first_token_latency_p50_ms": _pct(latencies, 50),
        "first_token_latency_p95_ms": _pct(latencies, 95),
    }
    return row, latencies, participants


def _pct(values: list[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None


def analytics(
    sessions: dict[str, list[Any]],
) -> tuple[dict[str, dict[str, Any]], dict[date, dict[str, Any]]]:
    """``session_analytics`` by session and ``daily_session_rollup`` by day."""
    rows: dict[str, dict[str, Any]] = {}
    by_day: dict[date, list[tuple[dict[str, Any], list[float], set[str]]]] = defaultdict(list)
    for session, messages in sessions.items():
        if not messages:
            continue  # a session is known by its events: an empty stream has no row
        row, latencies, participants = session_row(session, messages)
        rows[session] = row
        if row["first_event_at"] is not None:
            by_day[row["first_event_at"].date()].append((row, latencies, participants))
    daily = {}
    for day, members in by_day.items():
        latencies = [v for _, lat, _ in members for v in lat]
        daily[day] = {
            "day": day,
            "sessions": len(members),
            "events": sum(row["events"] for row, _, _ in members),
            "participants": len(set().union(*(keys for _, _, keys in members))),
            "first_token_latency_p50_ms": _pct(latencies, 50),
            "first_token_latency_p95_ms": _pct(latencies, 95),
        }
    return rows, daily


def replay(messages: list[Any]) -> dict[str, dict[str, Any]]:
    """§6: the state after folding every message from the stream's beginning."""
    state: dict[str, dict[str, Any]] = {}
    for message in messages:
        e = normalise(message)
        if e.type is None or e.key is None:
            continue
        if e.operation in UPSERTS:
            state.setdefault(e.type, {})[e.key] = e.value
        elif e.operation in DELETES and e.key in state.get(e.type, {}):
            del state[e.type][e.key]
            if not state[e.type]:
                del state[e.type]
        elif e.operation == "append" and e.type == "chunk":
            text = _field(e.value, "text")
            text = text if isinstance(text, str) else ""
            entries = state.setdefault("message", {})
            if e.key not in entries:
                entries[e.key] = {"role": _field(e.value, "role"), "text": text}
            elif isinstance(entries[e.key], dict):
                old = entries[e.key].get("text")
                entries[e.key]["text"] = (old if isinstance(old, str) else "") + text
    return state

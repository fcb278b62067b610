"""Seeded sessions with every case §2, §5 and §6 speak of, for the end-to-end comparisons.

Presence joins, status changes and leaves; user messages (State Protocol
shape) answered by assistant replies streamed in chunks (the flat shape);
edits, deletes and re-inserts; reactions added and taken back; events
without timestamps or with unusable ones; malformed messages (not objects,
no key, a non-string type) and State Protocol control messages.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

START = datetime(2026, 11, 25, 22, 0, tzinfo=UTC)
MALFORMED: list[Any] = [
    42,
    "just a string",
    [1, 2],
    None,
    {"type": "message", "value": {"role": "user"}},  # no key
    {"type": 7, "key": "msg:x", "operation": "set"},  # non-string type
    {"headers": {"control": "snapshot-start"}},
    {"type": "presence", "key": "user:ghost", "operation": "Set", "timestamp": 1_700_000_000},
    {"type": "typing", "key": "user:t", "operation": "set", "timestamp": "2026-11-26"},
    {
        "type": "typing",
        "key": "user:t",
        "operation": "delete",
        "timestamp": "2026-11-26T10:00:00+0000",
    },
    {"type": "typing", "key": "user:t", "operation": "set", "timestamp": "2026-11-26T10:00:60Z"},
]


class SessionWriter:
    """Builds one session's messages in stream order."""

    def __init__(self, rng: random.Random, start: datetime) -> None:
        self.rng = rng
        self.now = start
        self.messages: list[Any] = []
        self.next_id = 0

    def tick(self, low: float = 0.05, high: float = 3.0) -> str | None:
        """Advance the clock; an RFC 3339 time, or (sometimes) none at all."""
        self.now += timedelta(seconds=self.rng.uniform(low, high))
        roll = self.rng.random()
        if roll < 0.08:
            return None
        if roll < 0.15:
            zone = timedelta(hours=self.rng.choice([-5, 2, 9]))
            local = (self.now + zone).replace(tzinfo=None)
            sign, hours = (
                ("+" if zone >= timedelta(0) else "-"),
                abs(int(zone.total_seconds()) // 3600),
            )
            return local.isoformat(timespec="microseconds") + f"{sign}{hours:02d}:00"
        if roll < 0.2:
            return self.now.strftime("%Y-%m-%d %H:%M:%S.%f123z")  # space, nanos, lower z
        return self.now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    def state_change(self, type_: str, key: str, operation: str, value: Any) -> None:
        headers: dict[str, Any] = {"operation": operation}
        stamp = self.tick()
        if stamp is not None:
            headers["timestamp"] = stamp
        message: dict[str, Any] = {"type": type_, "key": key, "headers": headers}
        if value is not None or self.rng.random() < 0.5:
            message["value"] = value
        self.messages.append(message)

    def flat(self, type_: str, key: str, operation: str, value: Any) -> None:
        message: dict[str, Any] = {"type": type_, "key": key, "operation": operation}
        if value is not None:
            message["value"] = value
        stamp = self.tick(0.01, 0.4)
        if stamp is not None:
            message["timestamp"] = stamp
        self.messages.append(message)

    def new_message_key(self) -> str:
        self.next_id += 1
        return f"msg:{self.next_id}"


def generate(seed: int, sessions: int) -> dict[str, list[Any]]:
    """``sessions`` sessions named ``room-000``..., each a list of messages in stream order."""
    rng = random.Random(seed)
    result: dict[str, list[Any]] = {}
    for number in range(sessions):
        start = START + timedelta(hours=rng.uniform(0, 30))
        writer = SessionWriter(rng, start)
        users = [f"user:{name}" for name in rng.sample(["ann", "bo", "cy", "di", "ed"], 3)]
        user_messages: list[str] = []
        assistant_messages: list[str] = []
        for _ in range(rng.randint(0, 40)):
            roll = rng.random()
            if roll < 0.18:
                status = rng.choice(["online", "away", "offline", None, "online"])
                op = rng.choice(["set", "insert", "update", "remove", "delete", "set"])
                value = (
                    None
                    if op in ("remove", "delete")
                    else ({} if status is None else {"status": status})
                )
                (writer.flat if rng.random() < 0.5 else writer.state_change)(
                    "presence", rng.choice(users), op, value
                )
            elif roll < 0.4:
                key = writer.new_message_key()
                user_messages.append(key)
                writer.state_change(
                    "message",
                    key,
                    "insert",
                    {"role": "user", "text": "question", "author": rng.choice(users)},
                )
                if rng.random() < 0.8:
                    answer = writer.new_message_key()
                    assistant_messages.append(answer)
                    for index in range(rng.randint(1, 5)):
                        writer.flat(
                            "chunk",
                            answer,
                            "append",
                            {"role": "assistant", "text": f"t{index} ", "index": index},
                        )
                    if rng.random() < 0.5:
                        writer.state_change(
                            "message",
                            answer,
                            "insert",
                            {"role": "assistant", "text": "final", "author": "agent:1"},
                        )
            elif roll < 0.5 and user_messages:
                key = rng.choice(user_messages + assistant_messages)
                role = "user" if key in user_messages else "assistant"
                writer.state_change("message", key, "update", {"role": role, "text": "edited"})
            elif roll < 0.56 and user_messages:
                writer.state_change("message", rng.choice(user_messages), "delete", None)
            elif roll < 0.7 and (user_messages or assistant_messages):
                target = rng.choice(user_messages + assistant_messages).split(":")[1]
                key = f"reaction:{target}:{rng.choice(users)}:{rng.choice(['+1', 'ok'])}"
                op = rng.choice(["set", "insert", "delete", "remove", "append"])
                writer.state_change("reaction", key, op, {"emoji": key.rsplit(":", 1)[1]})
            elif roll < 0.8:
                writer.flat("typing", rng.choice(users), rng.choice(["set", "delete"]), {})
            elif roll < 0.86:
                writer.messages.append(rng.choice(MALFORMED))
            elif roll < 0.9:
                # headers.timestamp unusable: it must not fall back to the top level.
                writer.messages.append(
                    {
                        "type": "presence",
                        "key": rng.choice(users),
                        "timestamp": "2026-11-26T12:00:00Z",
                        "headers": {"operation": "set", "timestamp": "yesterday"},
                        "value": {"status": "online"},
                    }
                )
            else:
                # A chunk for a message that is not an object any more, or has no text.
                writer.flat("chunk", writer.new_message_key(), "append", {"index": 0})
        result[f"room-{number:03d}"] = writer.messages
    return result

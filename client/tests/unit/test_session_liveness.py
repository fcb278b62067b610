"""The expiry rule of presence and typing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from durable_sessions.sessions import is_expired
from durable_sessions.sessions.liveness import (
    PRESENCE_REFRESH,
    PRESENCE_TTL,
    TYPING_REFRESH,
    TYPING_TTL,
    deadline,
)

NOW = datetime(2026, 11, 26, 10, 0, 0, tzinfo=UTC)


def test_an_entry_expires_at_its_deadline() -> None:
    value = {"status": "online", "expires_at": deadline(NOW, timedelta(seconds=30))}
    assert not is_expired(value, NOW + timedelta(seconds=29, microseconds=999000))
    assert is_expired(value, NOW + timedelta(seconds=30))


def test_without_a_readable_deadline_an_entry_never_expires() -> None:
    far = NOW + timedelta(days=3650)
    for value in (
        {"status": "online"},
        {"expires_at": "tomorrow"},
        {"expires_at": 1764151200},
        {"expires_at": None},
        None,
        "online",
    ):
        assert not is_expired(value, far)


def test_writers_refresh_often_enough_to_miss_two_refreshes() -> None:
    assert PRESENCE_REFRESH * 3 == PRESENCE_TTL
    assert TYPING_REFRESH * 3 < TYPING_TTL

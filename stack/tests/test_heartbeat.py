"""The heartbeat's events reuse a bounded set of keys (a session-events snapshot stays small);
its token comes from one place; a bad setting is one line naming the variable."""

from __future__ import annotations

from pathlib import Path

import pytest
from ds_stack.heartbeat.producer import session_event
from ds_stack.heartbeat.settings import Settings, SettingsError, load_settings
from pydantic import ValidationError


def test_events_cycle_over_keep_keys() -> None:
    # Even ticks write events: 2, 4, 6, ...
    keys = [session_event("hb", tick, keep=3)["key"] for tick in range(2, 2 * 10, 2)]
    assert set(keys) == {"msg:hb-0", "msg:hb-1", "msg:hb-2"}
    assert keys[:4] == ["msg:hb-1", "msg:hb-2", "msg:hb-0", "msg:hb-1"]
    event = session_event("hb", 4, keep=3)
    assert event["headers"]["operation"] == "insert"  # type: ignore[index]


def test_the_token_comes_from_a_file_or_a_variable_not_both(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("DS_HEARTBEAT__TOKEN", "DS_HEARTBEAT__TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    assert Settings().token_source is None
    monkeypatch.setenv("DS_HEARTBEAT__TOKEN_FILE", "/run/ds-tokens/heartbeat")
    assert Settings().token_source == Path("/run/ds-tokens/heartbeat")
    monkeypatch.setenv("DS_HEARTBEAT__TOKEN", "abc")
    with pytest.raises(ValidationError, match="not both"):
        Settings()


@pytest.mark.parametrize("variable", ["DS_SERVER_URL", "DS_HEARTBEAT__SERVER_URL"])
def test_a_bad_url_names_the_variable_that_was_set(
    monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    for name in ("DS_SERVER_URL", "DS_HEARTBEAT__SERVER_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, "ds-server:4437")
    with pytest.raises(SettingsError) as raised:
        load_settings()
    assert str(raised.value) == (
        f"{variable}='ds-server:4437': Value error, must be an http:// or https:// URL"
    )

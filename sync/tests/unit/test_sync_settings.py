"""Settings: the DS_SYNC__ prefix, the reference stack's names, errors naming the variable."""

from __future__ import annotations

import re

import pytest
from ds_sync.settings import SettingsError, load_settings
from durable_sessions.protocol.patterns import Pattern

NAMES = ["DS_SERVER_URL", "POSTGRES_URL", "ELECTRIC_URL"]


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("DS_SYNC__") or name in NAMES:
            monkeypatch.delenv(name)


def test_defaults() -> None:
    settings = load_settings()
    assert settings.server_url == "http://127.0.0.1:4437"
    assert settings.postgres_url == "postgresql://postgres:password@127.0.0.1:54321/durable_streams"
    assert settings.streams == (Pattern("session-events"), Pattern("sessions/*"))
    assert settings.token is None


def test_reference_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DS_SERVER_URL", "http://server:4437/")
    monkeypatch.setenv("POSTGRES_URL", "postgresql://u:p@db:5432/x")
    monkeypatch.setenv("ELECTRIC_URL", "http://electric:3000")
    settings = load_settings()
    assert settings.server_url == "http://server:4437"
    assert settings.postgres_url == "postgresql://u:p@db:5432/x"
    assert settings.electric_url == "http://electric:3000"


def test_prefixed_name_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DS_SERVER_URL", "http://reference:1")
    monkeypatch.setenv("DS_SYNC__SERVER_URL", "http://prefixed:2")
    assert load_settings().server_url == "http://prefixed:2"


def test_token_and_streams(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DS_SYNC__TOKEN", "tok-3f9a")
    monkeypatch.setenv("DS_SYNC__STREAMS", "chat/*")
    settings = load_settings()
    assert settings.token is not None
    assert settings.token.get_secret_value() == "tok-3f9a"
    assert "tok-3f9a" not in repr(settings)
    assert settings.streams == (Pattern("chat/*"),)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("DS_SERVER_URL", "ftp://x", "DS_SERVER_URL='ftp://x': Value error, must be an http"),
        (
            "POSTGRES_URL",
            "mysql://x",
            "POSTGRES_URL='mysql://x': Value error, must be a postgresql",
        ),
        ("DS_SYNC__STREAMS", "room-*", "DS_SYNC__STREAMS='room-*': Value error"),
        ("DS_SYNC__IDLE_SECS", "soon", "DS_SYNC__IDLE_SECS='soon': Input should be a valid number"),
        (
            "DS_SYNC__POOL_SIZE",
            "1",
            "DS_SYNC__POOL_SIZE='1': Input should be greater than or equal",
        ),
        ("DS_SYNC__NAME", "Bad Name", "DS_SYNC__NAME='Bad Name': Value error, must be 1-40"),
    ],
)
def test_bad_value_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, message: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert str(caught.value).startswith(message)


def test_tables_and_the_feed_they_use(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = load_settings()
    assert [t.text for t in settings.tables] == ["items"]
    assert settings.electric_url is None
    assert settings.change_feed == "native"
    monkeypatch.setenv("DS_SYNC__TABLES", "items, sales.orders")
    monkeypatch.setenv("ELECTRIC_URL", "http://electric:3000/")
    settings = load_settings()
    assert [t.qualified for t in settings.tables] == ["public.items", "sales.orders"]
    assert settings.change_feed == "electric"
    monkeypatch.setenv("DS_SYNC__FEED", "native")
    assert load_settings().change_feed == "native"
    monkeypatch.setenv("DS_SYNC__TABLES", "")
    assert load_settings().tables == ()


def test_an_empty_electric_url_is_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ELECTRIC_URL", "")
    assert load_settings().change_feed == "native"


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        ({"DS_SYNC__FEED": "electric"}, "DS_SYNC__FEED=electric needs ELECTRIC_URL"),
        ({"DS_SYNC__TABLES": "a.b.c"}, "DS_SYNC__TABLES='a.b.c': Value error, 'a.b.c': a table"),
        ({"DS_SYNC__TABLES": "items,items"}, "'items' is listed twice"),
        ({"ELECTRIC_URL": "electric:3000"}, "ELECTRIC_URL='electric:3000': Value error, must be"),
        ({"DS_SYNC__MAX_SLOT_WAL_KEEP_SIZE": "4G"}, "must be a size such as 512MB"),
        ({"DS_SYNC__POLL_SECS": "0"}, "DS_SYNC__POLL_SECS='0'"),
    ],
)
def test_bad_mirror_settings_name_the_variable(
    monkeypatch: pytest.MonkeyPatch, variables: dict[str, str], message: str
) -> None:
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError, match=re.escape(message)):
        load_settings()


def test_the_token_comes_from_a_file_or_a_variable_not_both(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert load_settings().token_source is None
    monkeypatch.setenv("DS_SYNC__TOKEN", "abc")
    assert load_settings().token_source == "abc"
    monkeypatch.setenv("DS_SYNC__TOKEN_FILE", "/run/ds-tokens/ds-sync")
    with pytest.raises(SettingsError, match="set DS_SYNC__TOKEN or DS_SYNC__TOKEN_FILE, not both"):
        load_settings()
    monkeypatch.delenv("DS_SYNC__TOKEN")
    assert str(load_settings().token_source) == "/run/ds-tokens/ds-sync"

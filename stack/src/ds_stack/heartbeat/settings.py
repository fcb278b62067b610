"""Heartbeat producer configuration (``DS_HEARTBEAT__`` prefix).

``DS_SERVER_URL`` and ``POSTGRES_URL`` are the reference stack's names, with
ds-sync's defaults (the ``DS_HEARTBEAT__`` form wins when both are set).
"""

from __future__ import annotations

from pathlib import Path

from ds_settings import loading
from ds_settings.fields import (
    HttpUrl,
    PostgresUrl,
    flat_config,
    postgres_url_field,
    server_url_field,
)
from ds_settings.tokens import TokenOrFile
from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings

PREFIX = "DS_HEARTBEAT__"


class Settings(TokenOrFile, BaseSettings):
    """Every setting; each is ``DS_HEARTBEAT__<NAME>`` in the environment."""

    model_config = flat_config(PREFIX)

    server_url: HttpUrl = server_url_field(PREFIX, "ds-server (or Envoy) base URL")
    postgres_url: PostgresUrl = postgres_url_field(PREFIX, "Postgres with ds-sync's `items` table")
    token: SecretStr | None = Field(
        default=None,
        description="bearer token, when the server is behind Envoy (write on the stream's bucket)",
    )
    token_file: Path | None = Field(
        default=None,
        description="a file holding that token instead, read again whenever it changes (and "
        "after a `401`): a token renewed while the heartbeat runs; not with "
        "`DS_HEARTBEAT__TOKEN`",
    )
    interval_secs: float = Field(default=5.0, gt=0, description="seconds between two ticks")
    keep: int = Field(
        default=100,
        ge=1,
        description="rows of its own it keeps in `items` (older ones are deleted) and message "
        "keys it writes in turn, so what it leaves behind stays small however long it runs",
    )
    stream: str = Field(
        default="session-events",
        description="where even ticks append their session event (ds-sync copies it into "
        "`session_events`)",
    )


class SettingsError(ValueError):
    """A ``DS_HEARTBEAT__*`` (or reference-stack) variable has a value it can't use."""


def load_settings() -> Settings:
    """Settings from the environment; SettingsError names each bad variable."""
    return loading.load(Settings, SettingsError)

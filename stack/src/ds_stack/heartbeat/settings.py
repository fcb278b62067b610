"""Heartbeat producer configuration (``DS_HEARTBEAT__`` prefix).

``DS_SERVER_URL`` and ``POSTGRES_URL`` are the reference stack's names, with
ds-sync's defaults (the ``DS_HEARTBEAT__`` form wins when both are set).
"""

from __future__ import annotations

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

PREFIX = "DS_HEARTBEAT__"


class Settings(BaseSettings):
    """Every setting; each is ``DS_HEARTBEAT__<NAME>`` in the environment."""

    model_config = SettingsConfigDict(
        env_prefix=PREFIX, extra="ignore", frozen=True, populate_by_name=True
    )

    server_url: str = Field(
        default="http://127.0.0.1:4437",
        validation_alias=AliasChoices(PREFIX + "SERVER_URL", "DS_SERVER_URL"),
        description="ds-server (or Envoy) base URL",
    )
    postgres_url: str = Field(
        default="postgresql://postgres:password@127.0.0.1:54321/durable_streams",
        validation_alias=AliasChoices(PREFIX + "POSTGRES_URL", "POSTGRES_URL"),
        description="Postgres with ds-sync's `items` table",
    )
    token: SecretStr | None = Field(
        default=None,
        description="bearer token, when the server is behind Envoy (write on the stream's bucket)",
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

"""Heartbeat producer configuration (``DS_HEARTBEAT__`` prefix).

``DS_SERVER_URL`` and ``POSTGRES_URL`` are the reference stack's names, with
ds-sync's defaults (the ``DS_HEARTBEAT__`` form wins when both are set).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr, model_validator
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

    @model_validator(mode="after")
    def _one_token(self) -> Settings:
        if self.token is not None and self.token_file is not None:
            raise ValueError("set DS_HEARTBEAT__TOKEN or DS_HEARTBEAT__TOKEN_FILE, not both")
        return self

    @property
    def token_source(self) -> str | Path | None:
        """The bearer token: a file to read (again when it changes), a string, or none."""
        if self.token_file is not None:
            return self.token_file
        return None if self.token is None else self.token.get_secret_value()

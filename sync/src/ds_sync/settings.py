"""ds-sync configuration from the environment (``DS_SYNC__`` prefix).

The reference stack's names are accepted as they are: ``DS_SERVER_URL``,
``POSTGRES_URL`` and ``ELECTRIC_URL`` (each also as ``DS_SYNC__<NAME>``,
which wins when both are set).
"""

from __future__ import annotations

import os
import re
from typing import Annotated

import pydantic_settings
from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from ds_sync.patterns import Pattern, PatternError, parse_patterns

PREFIX = "DS_SYNC__"
_NAME_RE = re.compile(r"[a-z0-9_-]{1,40}")


def _aliases(field: str, reference_name: str) -> AliasChoices:
    return AliasChoices(PREFIX + field.upper(), reference_name)


class Settings(BaseSettings):
    """Every setting; each is ``DS_SYNC__<NAME>`` in the environment."""

    model_config = SettingsConfigDict(
        env_prefix=PREFIX, extra="ignore", frozen=True, populate_by_name=True
    )

    server_url: str = Field(
        default="http://127.0.0.1:4437", validation_alias=_aliases("server_url", "DS_SERVER_URL")
    )
    postgres_url: str = Field(
        default="postgresql://postgres:password@127.0.0.1:54321/durable_streams",
        validation_alias=_aliases("postgres_url", "POSTGRES_URL"),
    )
    # Read by the Postgres → stream direction (not in this release yet).
    electric_url: str = Field(
        default="http://127.0.0.1:3000", validation_alias=_aliases("electric_url", "ELECTRIC_URL")
    )
    # Bearer token for the server, when ds-sync reaches it through Envoy.
    token: SecretStr | None = None
    streams: Annotated[tuple[Pattern, ...], NoDecode] = parse_patterns("session-events,sessions/*")
    # Names this consumer on the server: its subscriptions and wake stream.
    name: str = "ds-sync"
    # An SSE reader with no data for this long closes; a wake brings it back.
    idle_secs: float = Field(default=30.0, gt=0)
    # How often the bucket listings are read again (a safety net under the wakes).
    rescan_secs: float = Field(default=30.0, gt=0)
    # Least time between two claims of a subscription's wake (bounds wake traffic).
    wake_interval_secs: float = Field(default=0.25, ge=0)
    # Streams read at once; the others wait (without a connection) for a turn.
    max_readers: int = Field(default=256, ge=1)
    pool_size: int = Field(default=4, ge=2, le=100)
    # Rows one transaction may take when several streams' batches are waiting.
    max_batch_rows: int = Field(default=20_000, ge=1)
    metrics_host: str = "127.0.0.1"
    # /metrics and /healthz; 0 turns the endpoint off.
    metrics_port: int = Field(default=4438, ge=0, le=65535)

    @field_validator("streams", mode="before")
    @classmethod
    def _parse_streams(cls, value: object) -> object:
        if isinstance(value, str):
            try:
                return parse_patterns(value)
            except PatternError as exc:
                raise ValueError(str(exc)) from None
        return value

    @field_validator("server_url", "electric_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return value.rstrip("/")

    @field_validator("postgres_url")
    @classmethod
    def _postgres_url(cls, value: str) -> str:
        if not value.startswith(("postgresql://", "postgres://")):
            raise ValueError("must be a postgresql:// URL")
        return value

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if _NAME_RE.fullmatch(value) is None:
            raise ValueError("must be 1-40 characters of a-z, 0-9, '_' and '-'")
        return value


class SettingsError(ValueError):
    """A variable has a value ds-sync can't use; the message names the variable."""


def load_settings() -> Settings:
    """Settings from the environment; SettingsError names each bad variable."""
    try:
        return Settings()
    except ValidationError as exc:
        raise SettingsError(_describe(exc)) from None
    except pydantic_settings.SettingsError as exc:
        raise SettingsError(str(exc)) from None


def _describe(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        problems.append(f"{_variable(str(error['loc'][0]))}={error['input']!r}: {error['msg']}")
    return "; ".join(problems)


def _variable(location: str) -> str:
    """The variable the user set for the field pydantic reports (by name or by an alias)."""
    for name, info in Settings.model_fields.items():
        names = [PREFIX + name.upper()]
        if isinstance(info.validation_alias, AliasChoices):
            names = [str(choice) for choice in info.validation_alias.choices]
        if location == name or location in names:
            return next((env for env in names if env in os.environ), names[0])
    return location

"""ds-spark configuration from the environment (``DS_SPARK__`` prefix); flags override it.

The reference stack's names are accepted as they are: ``DS_SERVER_URL`` and
``POSTGRES_URL`` (each also as ``DS_SPARK__<NAME>``, which wins when both
are set), with ds-sync's defaults.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pydantic_settings
from durable_sessions.protocol.patterns import PatternError, parse_patterns
from pydantic import (
    AliasChoices,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from ds_spark.errors import DsSparkError
from ds_spark.spark_session import DEFAULT_MASTER

if TYPE_CHECKING:
    from ds_spark.tokens import Token

PREFIX = "DS_SPARK__"


def _aliases(field: str, reference_name: str) -> AliasChoices:
    return AliasChoices(PREFIX + field.upper(), reference_name)


class Settings(BaseSettings):
    """Every setting; each is ``DS_SPARK__<NAME>`` in the environment."""

    model_config = SettingsConfigDict(
        env_prefix=PREFIX, extra="ignore", frozen=True, populate_by_name=True
    )

    server_url: str = Field(
        default="http://127.0.0.1:4437",
        validation_alias=_aliases("server_url", "DS_SERVER_URL"),
        description="ds-server (or Envoy) base URL",
    )
    postgres_url: str = Field(
        default="postgresql://postgres:password@127.0.0.1:54321/durable_streams",
        validation_alias=_aliases("postgres_url", "POSTGRES_URL"),
        description="Postgres with ds-sync's tables",
    )
    token: SecretStr | None = Field(
        default=None, description="bearer token for the server, when it is behind Envoy"
    )
    token_file: Path | None = Field(
        default=None,
        description="a file holding that token instead, read by the driver and the executors "
        "again whenever it changes (and after a `401`): a token renewed while a job or a "
        "schedule runs; on a cluster, at the same path on every executor; not with "
        "`DS_SPARK__TOKEN`",
    )
    streams: str = Field(
        default="session-events,sessions/*",
        description="the session streams: comma-separated stream paths or `{bucket}/*`",
    )
    master: str = Field(
        default=DEFAULT_MASTER,
        description="Spark master: `local[N]`, `local-cluster[...]`, `spark://…`, `k8s://…`; "
        "the `--master` flag overrides it",
    )
    output_dir: Path = Field(
        default=Path("spark-output"),
        description="Parquet and report directory; the `--output` flag overrides it",
    )
    postgres_partitions: int = Field(
        default=8,
        ge=1,
        le=1024,
        description="partitions of the `session_events` reader (rows are split by a hash of "
        "the stream)",
    )

    @field_validator("server_url")
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

    @field_validator("streams")
    @classmethod
    def _streams(cls, value: str) -> str:
        try:
            parse_patterns(value, listable=True)
        except PatternError as exc:
            raise ValueError(str(exc)) from None
        return value

    @model_validator(mode="after")
    def _one_token(self) -> Settings:
        if self.token is not None and self.token_file is not None:
            raise ValueError("set DS_SPARK__TOKEN or DS_SPARK__TOKEN_FILE, not both")
        return self

    @property
    def token_source(self) -> Token | None:
        """The bearer token: a file to read (again when it changes), a string, or none."""
        if self.token_file is not None:
            return self.token_file
        return None if self.token is None else self.token.get_secret_value()


class SettingsError(DsSparkError):
    """A variable has a value ds-spark can't use; the message names the variable."""


def load_settings() -> Settings:
    """Settings from the environment; SettingsError names each bad variable."""
    try:
        return Settings()
    except ValidationError as exc:
        problems = [
            # A rule across settings has no place; its message names them.
            f"{_variable(str(error['loc'][0]))}={error['input']!r}: {error['msg']}"
            if error["loc"]
            else str(error["msg"])
            for error in exc.errors()
        ]
        raise SettingsError("; ".join(problems)) from None
    except pydantic_settings.SettingsError as exc:
        raise SettingsError(str(exc)) from None


def _variable(location: str) -> str:
    """The variable the user set for the field pydantic reports (by name or by an alias)."""
    for name, info in Settings.model_fields.items():
        names = [PREFIX + name.upper()]
        if isinstance(info.validation_alias, AliasChoices):
            names = [str(choice) for choice in info.validation_alias.choices]
        if location == name or location in names:
            return next((n for n in names if n in os.environ), names[0])
    return location

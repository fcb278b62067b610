"""ds-spark configuration from the environment (``DS_SPARK__`` prefix); flags override it.

The reference stack's names are accepted as they are: ``DS_SERVER_URL`` and
``POSTGRES_URL`` (each also as ``DS_SPARK__<NAME>``, which wins when both
are set), with ds-sync's defaults.
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
from durable_sessions.protocol.patterns import PatternError, parse_patterns
from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings

from ds_spark.errors import DsSparkError
from ds_spark.spark_session import DEFAULT_MASTER

PREFIX = "DS_SPARK__"


class Settings(TokenOrFile, BaseSettings):
    """Every setting; each is ``DS_SPARK__<NAME>`` in the environment."""

    model_config = flat_config(PREFIX)

    server_url: HttpUrl = server_url_field(PREFIX, "ds-server (or Envoy) base URL")
    postgres_url: PostgresUrl = postgres_url_field(PREFIX, "Postgres with ds-sync's tables")
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

    @field_validator("streams")
    @classmethod
    def _streams(cls, value: str) -> str:
        try:
            parse_patterns(value, listable=True)
        except PatternError as exc:
            raise ValueError(str(exc)) from None
        return value


class SettingsError(DsSparkError):
    """A variable has a value ds-spark can't use; the message names the variable."""


def load_settings() -> Settings:
    """Settings from the environment; SettingsError names each bad variable."""
    return loading.load(Settings, SettingsError)

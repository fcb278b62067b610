"""ds-sync configuration from the environment (``DS_SYNC__`` prefix).

The reference stack's names are accepted as they are: ``DS_SERVER_URL``,
``POSTGRES_URL`` and ``ELECTRIC_URL`` (each also as ``DS_SYNC__<NAME>``,
which wins when both are set).
"""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path
from typing import Annotated, Literal

from ds_settings import defaults, loading
from ds_settings.fields import (
    HttpUrl,
    OptionalHttpUrl,
    PostgresUrl,
    flat_config,
    postgres_url_field,
    reference_aliases,
    server_url_field,
)
from ds_settings.tokens import TokenOrFile
from durable_sessions.protocol.patterns import Pattern, PatternError, parse_patterns
from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode

from ds_sync.table_names import TableName, TableNameError, parse_tables

PREFIX = "DS_SYNC__"
_NAME_RE = re.compile(r"[a-z0-9_-]{1,40}")
_INSTANCE_RE = re.compile(r"[A-Za-z0-9._:-]{1,60}")
# A Postgres size setting: a number and a unit (max_slot_wal_keep_size's form).
_SIZE_RE = re.compile(r"\d{1,9}(kB|MB|GB|TB)")


class Settings(TokenOrFile, BaseSettings):
    """Every setting; each is ``DS_SYNC__<NAME>`` in the environment."""

    model_config = flat_config(PREFIX)

    server_url: HttpUrl = server_url_field(
        PREFIX, "the ds-server to read (directly, or Envoy with a token)"
    )
    postgres_url: PostgresUrl = postgres_url_field(PREFIX, "the database of `session_events`")
    electric_url: OptionalHttpUrl = Field(
        default=None,
        validation_alias=reference_aliases(PREFIX, "electric_url", "ELECTRIC_URL"),
        description="Electric's base URL (its Shape API is `{url}/v1/shape`); set, the "
        "Postgres → stream direction reads Electric instead of Postgres's logical decoding "
        "(empty counts as unset)",
    )
    electric_secret: SecretStr | None = Field(
        default=None,
        description="Electric's secret (`ELECTRIC_SECRET` on Electric's side), sent as `secret`",
    )
    token: SecretStr | None = Field(
        default=None,
        description="bearer token sent to the server, for use through Envoy; it needs the `*` "
        "scope (subscriptions): `ds-token --sub ds-sync --bucket '*'`",
    )
    token_file: Path | None = Field(
        default=None,
        description="a file holding that token instead, read again whenever it changes (and "
        'after a `401`): a token renewed while ds-sync runs (docs/security.md, "Service '
        'tokens"); not with `DS_SYNC__TOKEN`',
    )
    streams: Annotated[tuple[Pattern, ...], NoDecode] = Field(
        default=parse_patterns("session-events,sessions/*"),
        description="comma-separated glob patterns of the streams to sync (`*` one segment, "
        "`**` any number)",
    )
    name: str = Field(
        default="ds-sync",
        description="this consumer's name on the server: its subscriptions and wake stream "
        "`ds-sync/{name}-wakes`",
    )
    instance: str = Field(
        default="",
        description="this process's name among the ds-sync processes sharing `DS_SYNC__NAME` "
        "(in `sync_instances`, leases and logs); empty: `{hostname}-{pid}`",
    )
    shards: int = Field(
        default=8,
        ge=0,
        le=1024,
        description="session streams are divided into this many shards, each leased to one of "
        "the processes sharing `DS_SYNC__NAME` (at most this many share the work; all of them "
        "need the same value); `0`: no leases, this process syncs every stream",
    )
    lease_ttl_secs: float = Field(
        default=5.0,
        ge=1,
        le=60,
        description="a shard's lease lasts this long unless renewed (every third of it): a "
        "killed process's shards are taken over about this long after it died",
    )
    idle_secs: float = Field(
        default=30.0,
        gt=0,
        description="a reader with no data for this long closes its connection; a wake starts "
        "it again",
    )
    rescan_secs: float = Field(
        default=30.0,
        gt=0,
        description="how often the streams are listed again (a safety net under the wakes)",
    )
    # Bounds the wake traffic.
    wake_interval_secs: float = Field(
        default=0.25, ge=0, description="least time between two claims of a subscription's wakes"
    )
    max_readers: int = Field(
        default=256,
        ge=1,
        description="streams read at once; others wait their turn without a connection",
    )
    pool_size: int = Field(
        default=4,
        ge=2,
        le=100,
        description="Postgres connections of the streams → Postgres direction (one commits, the "
        "others record new streams and statuses)",
    )
    max_batch_rows: int = Field(
        default=20_000,
        ge=1,
        description="rows one commit may take; also how many rows a stream may have read and "
        "not yet committed before its reader pauses",
    )
    # 50 ms: at 100 events/s a 20 ms tick cost 460 µs of CPU per event, this one
    # 260 µs, with the lag's p99 at 50 ms against a 100 ms target (docs/benchmarks.md).
    commit_interval_secs: float = Field(
        default=0.05,
        ge=0,
        le=10,
        description="the streams → Postgres commit tick: every stream's reads of the last tick "
        "go into one transaction (sooner when `max_batch_rows` rows wait)",
    )
    tables: Annotated[tuple[TableName, ...], NoDecode] = Field(
        default=parse_tables("items"),
        description="comma-separated tables (`name` or `schema.name`) mirrored to the streams "
        "`pg-{table}`; empty: none",
    )
    feed: Literal["auto", "native", "electric"] = Field(
        default="auto",
        description="the Postgres → stream change feed: `auto` is Electric when `ELECTRIC_URL` "
        "is set, else native (Postgres's own logical decoding)",
    )
    # 0.1 s: at 100 changes/s a 50 ms poll cost 395 µs of CPU per change, this one
    # 220 µs, with the lag's p99 at 103 ms against a 250 ms target (docs/benchmarks.md).
    poll_secs: float = Field(
        default=0.1,
        gt=0,
        le=60,
        description="native feed: how often the replication slot is checked when it had "
        "nothing new",
    )
    feed_batch_rows: int = Field(
        default=5_000,
        ge=1,
        description="changes (or snapshot rows) one batch may take from a feed; a transaction "
        "is never split",
    )
    post_max_bytes: int = Field(
        default=1 << 20, ge=1024, description="largest POST body sent to a `pg-{table}` stream"
    )
    # Below the server's retained-bytes limit (10 MiB by default), with room for a batch.
    compact_after_bytes: int = Field(
        default=4 << 20,
        ge=0,
        description="compact a `pg-{table}` stream once it holds this many bytes past its latest "
        "snapshot: the table's state is published as a snapshot at the tail, and the server drops "
        "the history before it (docs/sync.md); `0`: never",
    )
    max_slot_wal_keep_size: str = Field(
        default="4GB",
        description="set as Postgres's `max_slot_wal_keep_size` when the server has no bound "
        "(`-1`), so a slot can't keep WAL without bound while ds-sync is down; `off`: never set",
    )
    slot_warn_mb: int = Field(
        default=512,
        ge=1,
        description="a warning (once a minute) while a slot holds more WAL than this",
    )
    metrics_host: str = Field(
        default="127.0.0.1", description="where `/metrics` and `/healthz` listen"
    )
    metrics_port: int = Field(
        default=defaults.SYNC_PORT, ge=0, le=65535, description="their port; `0` turns them off"
    )
    metrics_top_streams: int = Field(
        default=10,
        ge=0,
        description="`/metrics` names this many streams in `ds_sync_checkpoint_age_seconds` "
        '(those behind the longest); the rest are one series, `stream="(others)"`',
    )

    @field_validator("streams", mode="before")
    @classmethod
    def _parse_streams(cls, value: object) -> object:
        if isinstance(value, str):
            try:
                return parse_patterns(value)
            except PatternError as exc:
                raise ValueError(str(exc)) from None
        return value

    @field_validator("tables", mode="before")
    @classmethod
    def _parse_tables(cls, value: object) -> object:
        if isinstance(value, str):
            try:
                return parse_tables(value)
            except TableNameError as exc:
                raise ValueError(str(exc)) from None
        return value

    @field_validator("max_slot_wal_keep_size")
    @classmethod
    def _size(cls, value: str) -> str:
        if value != "off" and _SIZE_RE.fullmatch(value) is None:
            raise ValueError("must be a size such as 512MB or 4GB, or off")
        return value

    @model_validator(mode="after")
    def _electric_needs_url(self) -> Settings:
        if self.feed == "electric" and self.electric_url is None:
            raise ValueError("DS_SYNC__FEED=electric needs ELECTRIC_URL")
        return self

    @property
    def change_feed(self) -> Literal["native", "electric"]:
        """Which change feed the Postgres → stream direction uses."""
        if self.feed == "auto":
            return "native" if self.electric_url is None else "electric"
        return self.feed

    @field_validator("instance")
    @classmethod
    def _instance(cls, value: str) -> str:
        if value and _INSTANCE_RE.fullmatch(value) is None:
            raise ValueError("must be 1-60 characters of A-Z, a-z, 0-9, '.', '_', ':' and '-'")
        return value

    @property
    def instance_name(self) -> str:
        """This process's name in the group: ``instance``, else ``{hostname}-{pid}``."""
        return self.instance or f"{socket.gethostname()[:40]}-{os.getpid()}"

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
    return loading.load(Settings, SettingsError)

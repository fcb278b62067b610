"""Server configuration from the environment (``DS_`` prefix, ``__`` nesting).

Names and defaults follow the reference stack so existing deployments keep
their configuration: ``DS_SERVER__PORT=4437``, ``DS_STORAGE__MODE`` and so on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from ds_settings import defaults, loading
from pydantic import (
    AliasChoices,
    BaseModel,
    Field,
    ValidationInfo,
    field_validator,
)
from pydantic_core import PydanticCustomError
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from ds_server.backends import BACKENDS, known_backends


class ServerSection(BaseModel):
    host: str = Field(
        default="127.0.0.1",
        description="listen address; loopback so that only the gateway is exposed",
    )
    port: int = Field(default=defaults.SERVER_PORT, ge=0, le=65535, description="listen port")
    long_poll_timeout_secs: float = Field(
        default=30.0, gt=0, description="how long a long-poll waits before `204`"
    )
    sse_reconnect_interval_secs: float = Field(
        default=60.0,
        ge=0,
        description="close SSE connections this often, so CDNs can collapse reconnects "
        "(`0` = never)",
    )
    sse_keepalive_secs: float = Field(
        default=15.0,
        gt=0,
        description="send an idle SSE connection a comment line (`: keep-alive`) this often, "
        "so proxies don't close it; keep it below every idle timeout on the way",
    )
    # Above the idle timeouts of clients and proxies (undici 4 s, httpx 5 s,
    # Envoy's upstream pool 60 s as configured here): a client that reuses a
    # connection the server is closing at that very moment gets a reset.
    keep_alive_secs: int = Field(
        default=75,
        gt=0,
        description="an idle keep-alive connection is closed after this long; keep it above "
        "the idle timeouts of clients and of the proxy in front (Envoy closes idle upstream "
        "connections after 60 s), so they close first",
    )
    # See docs/server.md, "Slow readers".
    stalled_reader_timeout_secs: float = Field(
        default=30.0,
        gt=0,
        description="disconnect a client that takes none of its response for this long (its "
        "TCP window stays closed); SSE and long-poll clients resume from their last offset",
    )
    request_headers_timeout_secs: float = Field(
        default=10.0,
        gt=0,
        description="a request's head (request line and headers) must arrive within this "
        "long of its first byte, or of the connection opening; later ones get `408` and the "
        "connection is closed",
    )
    read_chunk_bytes: int = Field(
        default=1024 * 1024,
        ge=1024,
        description="largest catch-up response body; clients page with `Stream-Next-Offset`",
    )
    # See ds_server.freed_memory.
    keep_freed_memory_bytes: int = Field(
        default=128 * 1024 * 1024,
        ge=0,
        le=2**31 - 1,
        description="freed memory the server keeps for reuse instead of faulting in fresh "
        "pages for the next large body; what stays unused goes back to the system every 10 s "
        "(glibc only; `0` = the allocator's defaults)",
    )


class HttpSection(BaseModel):
    cors_origins: Annotated[list[str], NoDecode] = Field(
        default=["*"], description="allowed CORS origins, comma-separated (`*` = any)"
    )
    viewer: bool = Field(
        default=True, description="serve the session viewer at `/ui/` (docs/viewer.md)"
    )

    @field_validator("cors_origins", mode="before")
    @classmethod
    def _split_origins(cls, value: object) -> object:
        # The reference stack takes a comma-separated list, not JSON.
        if isinstance(value, str):
            return [origin.strip() for origin in value.split(",") if origin.strip()]
        return value


class LimitsSection(BaseModel):
    """What a stream, a snapshot and the ``memory`` backend may hold (docs/operations.md, "Limits").

    Every limit is on what is *kept*, never on what a stream has written over
    its life: a stream's retained bytes are its tail minus its earliest
    retained offset, so publishing a snapshot frees room for more appends.
    """

    max_memory_bytes: int = Field(
        default=100 * 1024 * 1024,
        gt=0,
        description="`memory` backend: total bytes held across streams, snapshots excluded "
        "(`413` beyond); what a snapshot's retention drops is freed",
    )
    # The reference stack's DS_LIMITS__MAX_STREAM_BYTES names this same limit:
    # it is read as the retained bytes, so a snapshot frees room (issue: a
    # stream that had written 10 MiB in its life refused every append).
    max_retained_bytes: int = Field(
        default=10 * 1024 * 1024,
        gt=0,
        validation_alias=AliasChoices("max_retained_bytes", "max_stream_bytes"),
        description="bytes one stream retains: its tail minus its earliest retained offset "
        "(the latest snapshot's); an append or fork beyond gets `413` with nothing written, "
        "until a snapshot frees room. Also the largest request body of a create or append. "
        "`DS_LIMITS__MAX_STREAM_BYTES` (the reference stack's name) sets it too; nothing "
        "limits the bytes a stream writes over its life",
    )
    max_snapshot_bytes: int = Field(
        default=64 * 1024 * 1024,
        gt=0,
        description="largest snapshot blob (`PUT {stream}/snapshot/{offset}`; `413` beyond); "
        "a bootstrap serves it whole",
    )


class BucketQuota(BaseModel):
    """One bucket's quota in ``DS_QUOTAS__BUCKETS``; a field left out is the default's."""

    model_config = {"extra": "forbid"}

    max_bytes: int | None = Field(default=None, ge=0, description="`0` = no limit")
    max_streams: int | None = Field(default=None, ge=0, description="`0` = no limit")


class QuotasSection(BaseModel):
    """Per-bucket storage quotas (docs/operations.md, "Bucket quotas").

    A bucket is a stream path's first segment, whichever surface made the
    stream: the bucket authorization reads. Set by the operator, not by
    whoever creates the bucket (a token that may write a bucket may create it).
    """

    max_bytes: int = Field(
        default=0,
        ge=0,
        description="bytes each bucket may store: what its streams retain (tail minus earliest "
        "retained offset, as `DS_LIMITS__MAX_RETAINED_BYTES` counts) plus their snapshots; a "
        "write beyond gets `507` (`413` if it alone is larger than the quota), with nothing "
        "written (`0` = no limit)",
    )
    max_streams: int = Field(
        default=0,
        ge=0,
        description="streams each bucket may store (deleted ones that forks still read "
        "included); a create beyond gets `507` (`0` = no limit)",
    )
    buckets: dict[str, BucketQuota] = Field(
        default_factory=dict,
        description="quotas of particular buckets, as JSON: "
        '`{"chat": {"max_bytes": 10737418240, "max_streams": 100000}}`; a field left out is '
        "the default's, `0` is no limit",
    )

    @field_validator("buckets")
    @classmethod
    def _bucket_names(cls, buckets: dict[str, BucketQuota]) -> dict[str, BucketQuota]:
        for name in buckets:
            if not name or "/" in name or name.startswith("__"):
                raise PydanticCustomError(
                    "bucket_name",
                    "{name} is not a bucket (a path's first segment, not starting with __)",
                    {"name": repr(name)},
                )
        return buckets


class StorageSection(BaseModel):
    # Durable by default: ACID SQLite under data_dir (docs/server.md says why).
    mode: str = Field(
        default="sqlite",
        description="storage backend: `sqlite`, `file-durable`, `file-fast`, `memory` or "
        "`postgres` (names are lower-case)",
    )
    data_dir: Path = Field(
        default=Path("./data/streams"),
        description="root directory of the durable backends, created if missing; one server "
        "at a time; the `memory` backend has none and ignores it",
    )
    sqlite_max_db_bytes: int = Field(
        default=0,
        ge=0,
        description="`sqlite`: largest the database may grow (`0` = until the disk is full); "
        "writes beyond get `507` with nothing written",
    )

    postgres_url: str = Field(
        default="",
        validate_default=True,
        description="`postgres`: the libpq URL of the database "
        "(`postgresql://user:password@host:5432/dbname`); required in that mode",
    )
    postgres_schema: str = Field(
        default=defaults.STORE_SCHEMA,
        pattern=r"^[a-z_][a-z0-9_]{0,47}$",
        description="`postgres`: the schema holding the backend's tables, created if missing; "
        "servers sharing one schema share the streams",
    )
    postgres_pool_size: int = Field(
        default=8,
        ge=1,
        le=100,
        description="`postgres`: pooled connections per server, shared by reads and the "
        "subscription storage (the writer, the change feed and the subscription leadership "
        "hold one more each)",
    )

    @field_validator("postgres_url")
    @classmethod
    def _postgres_needs_url(cls, url: str, info: ValidationInfo) -> str:
        if info.data.get("mode") == "postgres" and not url:
            raise PydanticCustomError("missing_url", "required with DS_STORAGE__MODE=postgres")
        return url

    @field_validator("mode")
    @classmethod
    def _known_backend(cls, mode: str) -> str:
        # Checked here, not when the store opens, so a typo is a settings error.
        if mode not in BACKENDS:
            raise PydanticCustomError(
                "unknown_backend", "not one of: {known}", {"known": known_backends()}
            )
        return mode


class AuthSection(BaseModel):
    # "off" serves direct local use and the conformance suite.
    mode: Literal["off", "gateway"] = Field(
        default="off",
        description="`gateway`: enforce bucket scopes from the identity Envoy forwards "
        "(`X-JWT-Payload`); `off`: no authorization",
    )
    scope_claim: str = Field(
        default="ds",
        min_length=1,
        description="the token claim holding the `read`/`write` bucket lists",
    )
    # docs/security.md, "Limits per subject", says why this default.
    max_live_reads_per_sub: int = Field(
        default=1000,
        ge=0,
        description="`gateway`: SSE and long-poll reads one token subject (`sub`) may hold "
        "open at once on this server; more get `429` with `Retry-After` (`0` = no cap)",
    )


class SubscriptionsSection(BaseModel):
    webhook_allow_private: bool = Field(
        default=False,
        description="`true` lets https webhook targets resolve to private, loopback or "
        "link-local addresses (receivers on an internal network)",
    )
    wake_stream_retained_bytes: int = Field(
        default=1024 * 1024,
        ge=4096,
        description="a pull-wake subscription's wake stream keeps about this much: past it, the "
        "server publishes a snapshot that drops the older half of its events (capped at half "
        "of `DS_LIMITS__MAX_RETAINED_BYTES`); a reader that far behind gets `410`",
    )


class ClusterSection(BaseModel):
    advertise_url: str = Field(
        default="",
        description="`postgres` with several replicas: the URL other replicas reach this one "
        "at (they forward subscription requests to the one that runs them); "
        "default `http://{DS_SERVER__HOST}:{DS_SERVER__PORT}`",
    )


class MetricsSection(BaseModel):
    enabled: bool = Field(
        default=True,
        description="record Prometheus metrics and serve `GET /metrics` on their own listener",
    )
    host: str = Field(
        default="127.0.0.1",
        description="listen address of `/metrics`; loopback, so that only local scrapers reach "
        "it (never through the gateway)",
    )
    port: int = Field(
        default=defaults.SERVER_METRICS_PORT,
        ge=0,
        le=65535,
        description="listen port of `/metrics` (`0`: any free port, logged at start)",
    )
    stream_families: Annotated[list[str], NoDecode] = Field(
        default=["session-events", "sessions/", "pg-", "ds-sync/"],
        description="comma-separated stream path prefixes: the `family` label of the retained "
        "bytes gauges (a stream counts in the first prefix it starts with, else in `other`); "
        "the stack's defaults are its long-lived streams (session streams, table mirrors, "
        "ds-sync's wake stream)",
    )

    @field_validator("stream_families", mode="before")
    @classmethod
    def _split_families(cls, value: object) -> object:
        if isinstance(value, str):
            return [prefix.strip() for prefix in value.split(",") if prefix.strip()]
        return value


class LogSection(BaseModel):
    format: Literal["text", "json"] = Field(
        default="text", description="`json`: one JSON object per line; `text`: plain lines"
    )
    # Off by default: every deployment puts Envoy in front, whose access log
    # is the stack's (it also sees what it refuses, and the token's subject);
    # a second line per request here cost 6-10 % of a plain server's POSTs.
    requests: bool = Field(
        default=False,
        description="log one line per request at `info` (method, path without its query, "
        "status, duration, `x-request-id`); off by default: Envoy's access log is the "
        "stack's, turn this on for a ds-server without Envoy in front",
    )
    flush_secs: float = Field(
        default=0.1,
        gt=0,
        le=60,
        description="request log lines are written in batches, this often (and all of "
        "them at shutdown): the longest a line waits",
    )


class Settings(BaseSettings):
    """All settings of ds-server; every field can be set as ``DS_<SECTION>__<NAME>``."""

    model_config = SettingsConfigDict(
        env_prefix="DS_", env_nested_delimiter="__", extra="ignore", frozen=True
    )

    server: ServerSection = ServerSection()
    http: HttpSection = HttpSection()
    limits: LimitsSection = LimitsSection()
    quotas: QuotasSection = QuotasSection()
    storage: StorageSection = StorageSection()
    auth: AuthSection = AuthSection()
    subscriptions: SubscriptionsSection = SubscriptionsSection()
    cluster: ClusterSection = ClusterSection()
    metrics: MetricsSection = MetricsSection()
    log: LogSection = LogSection()


class SettingsError(ValueError):
    """A ``DS_*`` variable has a value ds-server can't use; the message names it."""


def load_settings() -> Settings:
    """Settings from the environment; a value that fails validation, or a section given whole
    as a variable (``DS_SERVER='{...}'``) that isn't JSON, raises SettingsError naming it."""
    return loading.load(Settings, SettingsError)

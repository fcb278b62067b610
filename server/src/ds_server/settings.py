"""Server configuration from the environment (``DS_`` prefix, ``__`` nesting).

Names and defaults follow the reference stack so existing deployments keep
their configuration: ``DS_SERVER__PORT=4437``, ``DS_STORAGE__MODE`` and so on.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

import pydantic_settings
from pydantic import BaseModel, Field, ValidationError, field_validator
from pydantic_core import PydanticCustomError
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from ds_server.backends import BACKENDS, known_backends


class ServerSection(BaseModel):
    host: str = "127.0.0.1"
    port: int = Field(default=4437, ge=0, le=65535)
    long_poll_timeout_secs: float = Field(default=30.0, gt=0)
    # 0 disables the periodic close of SSE connections.
    sse_reconnect_interval_secs: float = Field(default=60.0, ge=0)
    # An idle SSE connection gets a comment line this often, so proxies keep it open.
    sse_keepalive_secs: float = Field(default=15.0, gt=0)
    # An idle keep-alive connection is closed after this long. Above the idle
    # timeouts of clients and proxies (undici 4 s, httpx 5 s, Envoy's upstream
    # pool 60 s as configured here), so they close first: a client that reuses
    # a connection the server is closing at that very moment gets a reset.
    keep_alive_secs: int = Field(default=75, gt=0)
    # A client that takes none of its response for this long (its TCP window
    # stays closed) is disconnected; SSE and long-poll clients resume from
    # their last offset. See docs/server.md, "Slow readers".
    stalled_reader_timeout_secs: float = Field(default=30.0, gt=0)
    # A request head (request line and headers) must arrive within this long
    # of its first byte, or of the connection opening; slower ones get 408.
    request_headers_timeout_secs: float = Field(default=10.0, gt=0)
    # Largest body a single catch-up read returns; clients page with Stream-Next-Offset.
    read_chunk_bytes: int = Field(default=1024 * 1024, ge=1024)
    # Freed memory kept for reuse by later requests, released every 10 s
    # (glibc only; 0 = the allocator's defaults). See ds_server.freed_memory.
    keep_freed_memory_bytes: int = Field(default=128 * 1024 * 1024, ge=0, le=2**31 - 1)


class HttpSection(BaseModel):
    cors_origins: Annotated[list[str], NoDecode] = ["*"]

    @field_validator("cors_origins", mode="before")
    @classmethod
    def _split_origins(cls, value: object) -> object:
        # The reference stack takes a comma-separated list, not JSON.
        if isinstance(value, str):
            return [origin.strip() for origin in value.split(",") if origin.strip()]
        return value


class LimitsSection(BaseModel):
    max_memory_bytes: int = Field(default=100 * 1024 * 1024, gt=0)
    max_stream_bytes: int = Field(default=10 * 1024 * 1024, gt=0)


class StorageSection(BaseModel):
    # Durable by default: ACID SQLite under data_dir (docs/server.md says why).
    mode: str = "sqlite"
    data_dir: Path = Path("./data/streams")
    # sqlite: the most the database file may grow to (0 = until the disk is full);
    # writes beyond get 507 with nothing written.
    sqlite_max_db_bytes: int = Field(default=0, ge=0)

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
    # "gateway": enforce bucket scopes from the identity Envoy forwards
    # (X-JWT-Payload, X-JWT-Sub). "off": no authorization (direct local use,
    # the conformance suite).
    mode: Literal["off", "gateway"] = "off"
    # The token claim holding {"read": [...], "write": [...]} bucket lists.
    scope_claim: str = Field(default="ds", min_length=1)


class SubscriptionsSection(BaseModel):
    # Webhook targets must resolve to public addresses; true lets https
    # receivers on private networks (10/8, 192.168/16, loopback...) be woken.
    webhook_allow_private: bool = False


class Settings(BaseSettings):
    """All settings of ds-server; every field can be set as ``DS_<SECTION>__<NAME>``."""

    model_config = SettingsConfigDict(
        env_prefix="DS_", env_nested_delimiter="__", extra="ignore", frozen=True
    )

    server: ServerSection = ServerSection()
    http: HttpSection = HttpSection()
    limits: LimitsSection = LimitsSection()
    storage: StorageSection = StorageSection()
    auth: AuthSection = AuthSection()
    subscriptions: SubscriptionsSection = SubscriptionsSection()


class SettingsError(ValueError):
    """A ``DS_*`` variable has a value ds-server can't use; the message names it."""


def load_settings() -> Settings:
    """Settings from the environment; a value that fails validation raises SettingsError."""
    try:
        return Settings()
    except ValidationError as exc:
        raise SettingsError(_describe(exc)) from None
    except pydantic_settings.SettingsError as exc:
        # A section given whole as a variable (DS_SERVER='{...}') that isn't JSON.
        raise SettingsError(_describe_section(exc)) from None


def _describe_section(exc: pydantic_settings.SettingsError) -> str:
    # pydantic-settings says 'error parsing value for field "server" from source ...'.
    field = re.search(r'field "([^"]+)"', str(exc))
    name = f"DS_{field.group(1).upper()}" if field else "a DS_* variable"
    return f"{name}: not a JSON object of its settings ({exc.__cause__ or exc})"


def _describe(exc: ValidationError) -> str:
    # pydantic names the field by its place (("server", "port")); the user
    # set a variable, so name that: DS_SERVER__PORT='abc': Input should be ...
    problems = []
    for error in exc.errors():
        name = "DS_" + "__".join(str(part).upper() for part in error["loc"])
        problems.append(f"{name}={error['input']!r}: {error['msg']}")
    return "; ".join(problems)

"""Production gateway settings from the environment (``DS_PROXY__*``)."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


class ProxySettings(BaseSettings):
    """What the production template needs; the first three have no default."""

    model_config = SettingsConfigDict(env_prefix="DS_PROXY__", extra="ignore", frozen=True)

    issuer: str = Field(min_length=1)
    audiences: Annotated[tuple[str, ...], NoDecode] = Field(min_length=1)
    jwks_uri: str
    upstream_host: str = "ds-server"
    upstream_port: int = Field(default=4437, ge=1, le=65535)
    listen_port: int = Field(default=8080, ge=1, le=65535)
    admin_port: int = Field(default=9901, ge=1, le=65535)
    jwks_cache_secs: int = Field(default=300, ge=1)
    clock_skew_secs: int = Field(default=30, ge=0, le=300)
    # Must exceed ds-server's SSE reconnect interval and long-poll timeout.
    stream_idle_timeout_secs: int = Field(default=120, ge=1)
    ca_bundle: str = "/etc/ssl/certs/ca-certificates.crt"

    @field_validator("audiences", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("jwks_uri")
    @classmethod
    def _check_uri(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("https", "http") or not parts.hostname:
            raise ValueError("DS_PROXY__JWKS_URI must be an http(s) URL")
        return value

    @model_validator(mode="after")
    def _tls_unless_loopback(self) -> ProxySettings:
        parts = urlsplit(self.jwks_uri)
        if parts.scheme == "http" and parts.hostname not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError("fetch the JWKS over https (plain http only on loopback)")
        return self

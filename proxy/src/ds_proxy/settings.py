"""Gateway settings from the environment (``DS_PROXY__*``)."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

from ds_settings import defaults
from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from ds_proxy.limits import SubjectLimits
from ds_proxy.tls import TlsFiles


class GatewayAddresses(BaseSettings):
    """Where Envoy listens and where ds-server is: all a container running the test keys needs."""

    model_config = SettingsConfigDict(env_prefix="DS_PROXY__", extra="ignore", frozen=True)

    upstream_host: str = Field(default="ds-server", description="where ds-server listens (host)")
    upstream_port: int = Field(
        default=defaults.SERVER_PORT,
        ge=1,
        le=65535,
        description="where ds-server listens (port)",
    )
    listen_port: int = Field(
        default=defaults.GATEWAY_PORT, ge=1, le=65535, description="the public port"
    )
    admin_port: int = Field(
        default=defaults.ADMIN_PORT,
        ge=1,
        le=65535,
        description="Envoy admin; on 127.0.0.1 in the production template",
    )


class ProxySettings(GatewayAddresses, SubjectLimits, TlsFiles):
    """What the production template needs; issuer, audiences and JWKS URI have no default."""

    issuer: str = Field(min_length=1, description="expected `iss`")
    audiences: Annotated[tuple[str, ...], NoDecode] = Field(
        min_length=1, description="accepted `aud` values, comma-separated"
    )
    jwks_uri: str = Field(
        description="the identity provider's JWKS URL; https (plain http only on loopback)"
    )
    jwks_cache_secs: int = Field(default=300, ge=1, description="how long fetched keys are cached")
    clock_skew_secs: int = Field(
        default=30, ge=0, le=300, description="allowed clock skew for `exp`/`nbf`"
    )
    stream_idle_timeout_secs: int = Field(
        default=120,
        ge=1,
        description="a stream idle this long is closed; must exceed ds-server's SSE reconnect "
        "interval and long-poll timeout, so the server, not Envoy, ends live reads",
    )
    ca_bundle: str = Field(
        default="/etc/ssl/certs/ca-certificates.crt",
        description="CA certificates for the JWKS endpoint",
    )

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

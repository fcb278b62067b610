"""Field helpers: the reference stack's variable names, URL fields checked on load, and the
two every service client has (the server it talks to, the stack's database)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, AliasChoices, Field
from pydantic_settings import SettingsConfigDict

from ds_settings import defaults


def flat_config(prefix: str) -> SettingsConfigDict:
    """Settings read as ``{prefix}NAME`` (other variables ignored), frozen, settable by field
    name in code as well as by alias."""
    return SettingsConfigDict(env_prefix=prefix, extra="ignore", frozen=True, populate_by_name=True)


def reference_aliases(prefix: str, field: str, reference_name: str) -> AliasChoices:
    """``{prefix}{FIELD}`` or the reference stack's name for it; the first wins when both
    are set."""
    return AliasChoices(prefix + field.upper(), reference_name)


def http_url(value: str) -> str:
    """An ``http://`` or ``https://`` base URL, without a trailing slash."""
    if not value.startswith(("http://", "https://")):
        raise ValueError("must be an http:// or https:// URL")
    return value.rstrip("/")


def optional_http_url(value: str | None) -> str | None:
    """``http_url``, or None when unset or empty (compose files pass unset variables as "")."""
    return http_url(value) if value else None


def postgres_url(value: str) -> str:
    """A libpq URL, ``postgresql://`` (or ``postgres://``)."""
    if not value.startswith(("postgresql://", "postgres://")):
        raise ValueError("must be a postgresql:// URL")
    return value


HttpUrl = Annotated[str, AfterValidator(http_url)]
OptionalHttpUrl = Annotated[str | None, AfterValidator(optional_http_url)]
PostgresUrl = Annotated[str, AfterValidator(postgres_url)]


def server_url_field(prefix: str, description: str) -> Any:
    """``server_url`` (an ``HttpUrl``): ``{prefix}SERVER_URL`` or ``DS_SERVER_URL``, the local
    stack's by default."""
    return Field(
        default=defaults.SERVER_URL,
        validation_alias=reference_aliases(prefix, "server_url", "DS_SERVER_URL"),
        description=description,
    )


def postgres_url_field(prefix: str, description: str) -> Any:
    """``postgres_url`` (a ``PostgresUrl``): ``{prefix}POSTGRES_URL`` or ``POSTGRES_URL``, the
    local stack's database by default."""
    return Field(
        default=defaults.POSTGRES_URL,
        validation_alias=reference_aliases(prefix, "postgres_url", "POSTGRES_URL"),
        description=description,
    )

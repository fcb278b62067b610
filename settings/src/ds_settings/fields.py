"""Field helpers: the reference stack's variable names, and URL fields checked on load."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, AliasChoices


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

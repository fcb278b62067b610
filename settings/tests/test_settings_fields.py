"""The URL fields, the reference stack's aliases, the service URLs every client has."""

from __future__ import annotations

import pytest
from ds_settings import defaults
from ds_settings.fields import (
    HttpUrl,
    OptionalHttpUrl,
    PostgresUrl,
    flat_config,
    postgres_url_field,
    reference_aliases,
    server_url_field,
)
from pydantic import BaseModel, ValidationError
from pydantic_settings import BaseSettings


class Urls(BaseModel):
    server: HttpUrl = "http://127.0.0.1:4437"
    electric: OptionalHttpUrl = None
    database: PostgresUrl = "postgresql://localhost/db"


def test_an_http_url_loses_its_trailing_slash() -> None:
    assert Urls(server="https://gateway:8443/").server == "https://gateway:8443"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("server", "gateway:8080", "must be an http:// or https:// URL"),
        ("electric", "ftp://electric", "must be an http:// or https:// URL"),
        ("database", "mysql://db", "must be a postgresql:// URL"),
    ],
)
def test_other_schemes_are_refused(field: str, value: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Urls(**{field: value})


def test_an_empty_optional_url_is_unset() -> None:
    assert Urls(electric="").electric is None
    assert Urls(electric="http://electric:3000/").electric == "http://electric:3000"


def test_postgres_urls_of_either_scheme_are_kept_as_given() -> None:
    assert Urls(database="postgres://u@h/d").database == "postgres://u@h/d"


def test_the_prefixed_name_comes_first() -> None:
    aliases = reference_aliases("DS_SYNC__", "server_url", "DS_SERVER_URL")
    assert aliases.choices == ["DS_SYNC__SERVER_URL", "DS_SERVER_URL"]


class Client(BaseSettings):
    model_config = flat_config("DS_DEMO__")

    server_url: HttpUrl = server_url_field("DS_DEMO__", "the server")
    postgres_url: PostgresUrl = postgres_url_field("DS_DEMO__", "the database")


def test_the_service_urls_default_to_the_local_stack(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DS_SERVER_URL", "POSTGRES_URL", "DS_DEMO__SERVER_URL", "DS_DEMO__POSTGRES_URL"):
        monkeypatch.delenv(name, raising=False)
    client = Client()
    assert (client.server_url, client.postgres_url) == (defaults.SERVER_URL, defaults.POSTGRES_URL)
    assert Client.model_fields["server_url"].description == "the server"


def test_the_prefixed_url_wins_over_the_reference_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DS_SERVER_URL", "http://reference")
    monkeypatch.setenv("POSTGRES_URL", "postgresql://reference/db")
    assert Client().server_url == "http://reference"
    monkeypatch.setenv("DS_DEMO__SERVER_URL", "http://prefixed/")
    assert Client().server_url == "http://prefixed"
    assert Client().postgres_url == "postgresql://reference/db"
    with pytest.raises(ValidationError, match="frozen"):
        Client().server_url = "http://other"  # type: ignore[misc]

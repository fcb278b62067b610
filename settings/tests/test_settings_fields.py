"""The URL fields and the reference stack's aliases."""

from __future__ import annotations

import pytest
from ds_settings.fields import HttpUrl, OptionalHttpUrl, PostgresUrl, reference_aliases
from pydantic import BaseModel, ValidationError


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

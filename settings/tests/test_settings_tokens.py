"""A token or a token file, not both; the token source the SDK's providers take."""

from __future__ import annotations

from pathlib import Path

import pytest
from ds_settings.tokens import TokenOrFile
from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class WithToken(TokenOrFile, BaseSettings):
    model_config = SettingsConfigDict(env_prefix="DS_DEMO__")

    name: str = "first"
    token: SecretStr | None = Field(default=None, description="the token")
    token_file: Path | None = Field(default=None, description="a file holding it")


@pytest.fixture(autouse=True)
def _no_demo_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DS_DEMO__TOKEN", raising=False)
    monkeypatch.delenv("DS_DEMO__TOKEN_FILE", raising=False)


def test_both_are_refused_naming_the_two_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DS_DEMO__TOKEN", "t")
    monkeypatch.setenv("DS_DEMO__TOKEN_FILE", "/run/token")
    with pytest.raises(ValueError, match="set DS_DEMO__TOKEN or DS_DEMO__TOKEN_FILE, not both"):
        WithToken()


def test_the_source_is_the_file_the_string_or_none(monkeypatch: pytest.MonkeyPatch) -> None:
    assert WithToken().token_source is None
    monkeypatch.setenv("DS_DEMO__TOKEN", "secret")
    assert WithToken().token_source == "secret"
    monkeypatch.delenv("DS_DEMO__TOKEN")
    monkeypatch.setenv("DS_DEMO__TOKEN_FILE", "/run/token")
    assert WithToken().token_source == Path("/run/token")


def test_the_fields_keep_the_order_and_descriptions_of_the_class() -> None:
    assert list(WithToken.model_fields) == ["name", "token", "token_file"]
    assert WithToken.model_fields["token"].description == "the token"

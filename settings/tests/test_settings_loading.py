"""Loading: a bad value is one line naming the variable the user set, alias or nested."""

from __future__ import annotations

import os

import pytest
from ds_settings.fields import reference_aliases
from ds_settings.loading import load
from pydantic import AliasChoices, BaseModel, Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

PREFIX = "DS_DEMO__"


class Flat(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=PREFIX, extra="ignore", populate_by_name=True)

    url: str = Field(default="x", validation_alias=reference_aliases(PREFIX, "url", "DEMO_URL"))
    count: int = 1
    low: int = 0
    high: int = 10

    @model_validator(mode="after")
    def _ordered(self) -> Flat:
        if self.low > self.high:
            raise ValueError("DS_DEMO__LOW must not exceed DS_DEMO__HIGH")
        return self


class Aliased(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=PREFIX, extra="ignore", populate_by_name=True)

    count: int = Field(default=1, validation_alias=reference_aliases(PREFIX, "count", "DEMO_COUNT"))


class Section(BaseModel):
    port: int = 1
    retained: int = Field(default=1, validation_alias=AliasChoices("retained", "older_name"))


class Nested(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="DS_DEMO_", env_nested_delimiter="__")

    section: Section = Section()


class Problem(ValueError):
    pass


@pytest.fixture(autouse=True)
def _no_demo_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("DS_DEMO", "DEMO_")):
            monkeypatch.delenv(name)


def test_a_field_is_named_by_its_prefixed_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DS_DEMO__COUNT", "many")
    with pytest.raises(Problem) as raised:
        load(Flat, Problem)
    assert str(raised.value) == (
        "DS_DEMO__COUNT='many': Input should be a valid integer, unable to parse string as an "
        "integer"
    )


@pytest.mark.parametrize("variable", ["DEMO_COUNT", "DS_DEMO__COUNT"])
def test_an_aliased_field_is_named_by_the_variable_that_was_set(
    monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    monkeypatch.setenv(variable, "not a number")
    with pytest.raises(Problem, match=f"^{variable}='not a number': "):
        load(Aliased, Problem)


def test_a_rule_across_fields_is_its_message_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DS_DEMO__LOW", "5")
    monkeypatch.setenv("DS_DEMO__HIGH", "4")
    with pytest.raises(Problem) as raised:
        load(Flat, Problem)
    assert str(raised.value) == "Value error, DS_DEMO__LOW must not exceed DS_DEMO__HIGH"


def test_problems_are_joined_on_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DS_DEMO__COUNT", "a")
    monkeypatch.setenv("DS_DEMO__LOW", "b")
    with pytest.raises(Problem) as raised:
        load(Flat, Problem)
    message = str(raised.value)
    assert message.startswith("DS_DEMO__COUNT='a': ")
    assert "; DS_DEMO__LOW='b': " in message
    assert "\n" not in message


@pytest.mark.parametrize("variable", ["DS_DEMO_SECTION__PORT", "DS_DEMO_SECTION__OLDER_NAME"])
def test_a_nested_field_is_named_with_its_section(
    monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    monkeypatch.setenv(variable, "x")
    with pytest.raises(Problem, match=f"^{variable}='x': Input should be a valid integer"):
        load(Nested, Problem)


def test_a_section_given_whole_must_be_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DS_DEMO_SECTION", "port=3")
    with pytest.raises(Problem, match=r"^DS_DEMO_SECTION: not a JSON object of its settings \("):
        load(Nested, Problem)


def test_good_values_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEMO_URL", "reference")
    monkeypatch.setenv("DS_DEMO_SECTION__OLDER_NAME", "7")
    assert load(Flat, Problem).url == "reference"
    assert load(Nested, Problem).section.retained == 7

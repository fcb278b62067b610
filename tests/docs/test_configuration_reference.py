"""docs/configuration.md holds a current table for every settings class."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from pydantic import BaseModel, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

if TYPE_CHECKING:
    from types import ModuleType

TOOL = Path(__file__).resolve().parents[2] / "tools" / "config_reference.py"


def _load_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("config_reference", TOOL)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["config_reference"] = module
    spec.loader.exec_module(module)
    return module


ref = _load_tool()


def test_the_committed_page_is_current() -> None:
    page = ref.PAGE.read_text(encoding="utf-8")
    assert ref.render(page) == page, "docs/configuration.md is stale: run `make config-reference`"


def test_every_settings_class_has_a_table() -> None:
    page = ref.PAGE.read_text(encoding="utf-8")
    assert ref.undocumented(page) == []


def test_discovery_finds_every_component() -> None:
    names = {f"{cls.__module__}:{cls.__qualname__}" for cls in ref.settings_classes()}
    assert {
        "ds_server.settings:Settings",
        "ds_proxy.settings:ProxySettings",
        "ds_sync.settings:Settings",
        "ds_spark.settings:Settings",
    } <= names


class _Section(BaseModel):
    port: int = Field(default=4437, ge=0, le=65535, description="listen port")
    ratio: float = Field(default=0.5, gt=0, description="a | b")


class _Nested(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="X_", env_nested_delimiter="__")
    server: _Section = _Section()


class _Flat(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="Y__")
    name: str = Field(description="who")
    nothing: str | None = Field(default=None, description="unset by default")


def test_nested_sections_become_double_underscore_names() -> None:
    rows = ref.table(_Nested).splitlines()[2:]
    assert rows == [
        "| `X_SERVER__PORT` | `4437` | integer, ≥ 0, ≤ 65535 | listen port |",
        "| `X_SERVER__RATIO` | `0.5` | number, > 0 | a \\| b |",
    ]


def test_required_and_unset_defaults_are_said_so() -> None:
    rows = ref.table(_Flat).splitlines()[2:]
    assert rows == [
        "| `Y__NAME` | (required) | text | who |",
        "| `Y__NOTHING` | unset | text | unset by default |",
    ]


def test_a_field_without_a_description_is_refused() -> None:
    class Bare(BaseSettings):
        model_config = SettingsConfigDict(env_prefix="Z__")
        size: int = 3

    with pytest.raises(ref.ConfigReferenceError, match=r"Z__SIZE .* has no Field\(description"):
        ref.table(Bare)


def test_a_stale_table_is_rewritten() -> None:
    page = (
        "intro\n<!-- settings-table: ds_spark.settings:Settings -->\n| old |\n"
        "<!-- end settings-table -->\noutro\n"
    )
    fresh = ref.render(page)
    assert "| old |" not in fresh
    assert "`DS_SPARK__MASTER`" in fresh
    assert fresh.startswith("intro\n")
    assert fresh.endswith("<!-- end settings-table -->\noutro\n")

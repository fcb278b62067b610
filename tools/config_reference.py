"""The settings tables of docs/configuration.md, generated from the settings classes.

Each table sits between two markers naming its class::

    <!-- settings-table: ds_server.settings:Settings -->
    | variable | default | values | meaning |
    ...
    <!-- end settings-table -->

Variable names, defaults, allowed values and descriptions (``Field(description=...)``)
all come from the class, so the page cannot drift from the code.

    python tools/config_reference.py --write   # regenerate the tables (make config-reference)
    python tools/config_reference.py --check   # exit 1 if a table is stale or a class is missing
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
import types
import typing
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import annotated_types
from pydantic import AliasChoices, BaseModel, SecretStr
from pydantic_core import PydanticUndefined
from pydantic_settings import BaseSettings

if TYPE_CHECKING:
    from collections.abc import Iterator

    from pydantic.fields import FieldInfo

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "configuration.md"
HEADER = "| variable | default | values | meaning |\n|---|---|---|---|\n"
_BLOCK = re.compile(
    r"(<!-- settings-table: (?P<target>[\w.]+:\w+) -->\n)(?P<body>.*?)"
    r"(<!-- end settings-table -->)",
    re.DOTALL,
)


class ConfigReferenceError(Exception):
    """The page or a settings class can't be turned into a table; the message says why."""


def load(target: str) -> type[BaseSettings]:
    """The class a marker names, ``module:Class``."""
    module_name, _, class_name = target.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, BaseSettings)):
        raise ConfigReferenceError(f"{target} is not a pydantic-settings class")
    return cls


def variables(cls: type[BaseSettings]) -> Iterator[tuple[list[str], FieldInfo]]:
    """Every setting of ``cls``: its environment variable names and its field."""
    prefix = str(cls.model_config.get("env_prefix") or "")
    delimiter = cls.model_config.get("env_nested_delimiter")
    for name, info in cls.model_fields.items():
        section = info.annotation
        if delimiter and isinstance(section, type) and issubclass(section, BaseModel):
            for sub_name, sub_info in section.model_fields.items():
                # A field read under several names (an older name kept working) lists each.
                choices = sub_info.validation_alias
                keys = choices.choices if isinstance(choices, AliasChoices) else [sub_name]
                yield [f"{prefix}{name}{delimiter}{key}".upper() for key in keys], sub_info
            continue
        names = [f"{prefix}{name}".upper()]
        if isinstance(info.validation_alias, AliasChoices):
            names = [str(choice) for choice in info.validation_alias.choices]
        yield names, info


def _code(text: str) -> str:
    return f"`{text}`"


def _default_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, list | tuple):
        # Lists are read comma-separated; members may be parsed values with their text.
        return ",".join(str(getattr(item, "text", item)) for item in value)
    return str(value)


def default(info: FieldInfo) -> str:
    """The default as a user would write it, or why there is none."""
    if info.is_required():
        return "(required)"
    value = info.get_default(call_default_factory=True)
    if value is None or value is PydanticUndefined:
        return "unset"
    return _code(_default_text(value))


def _bounds(info: FieldInfo) -> str:
    parts = []
    for item in info.metadata:
        if isinstance(item, annotated_types.Ge):
            parts.append(f"≥ {item.ge}")
        elif isinstance(item, annotated_types.Gt):
            parts.append(f"> {item.gt}")
        elif isinstance(item, annotated_types.Le):
            parts.append(f"≤ {item.le}")
        elif isinstance(item, annotated_types.Lt):
            parts.append(f"< {item.lt}")
        elif isinstance(item, annotated_types.MinLen) and item.min_length > 0:
            parts.append("not empty")
    return ", ".join(parts)


def _kind(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
    if origin is Literal:
        return " \\| ".join(_code(str(arg)) for arg in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType) and len(args) == 1:
        return _kind(args[0])
    if origin in (list, tuple):
        return "comma-separated list"
    if origin is dict:
        return "JSON object"
    simple = {
        bool: "`true` / `false`",
        int: "integer",
        float: "number",
        str: "text",
        Path: "path",
        SecretStr: "secret",
    }
    if annotation in simple:
        return simple[annotation]
    raise ConfigReferenceError(f"no description of the type {annotation!r}")


def values(info: FieldInfo) -> str:
    """What the variable accepts: its type and bounds."""
    kind = _kind(info.annotation)
    bounds = _bounds(info)
    return f"{kind}, {bounds}" if bounds else kind


def table(cls: type[BaseSettings]) -> str:
    """The markdown table of every setting of ``cls``."""
    rows = []
    for names, info in variables(cls):
        if not info.description:
            where = f"{cls.__module__}.{cls.__qualname__}"
            raise ConfigReferenceError(f"{names[0]} ({where}) has no Field(description=...)")
        variable = " / ".join(_code(name) for name in names)
        meaning = info.description.replace("|", "\\|")
        rows.append(f"| {variable} | {default(info)} | {values(info)} | {meaning} |\n")
    return HEADER + "".join(rows)


def render(page: str) -> str:
    """``page`` with every marked table regenerated."""
    return _BLOCK.sub(
        lambda match: match.group(1) + table(load(match.group("target"))) + match.group(4),
        page,
    )


def documented(page: str) -> set[str]:
    """The classes the page has tables for, ``module:Class``."""
    return {match.group("target") for match in _BLOCK.finditer(page)}


def settings_classes() -> set[type[BaseSettings]]:
    """Every pydantic-settings class in a ``settings.py`` of a workspace member's sources."""
    found = set()
    for path in sorted(ROOT.glob("*/src/*/**/settings.py")):
        package_root = path.parents[len(path.relative_to(ROOT).parts) - 3]
        module_name = ".".join(path.relative_to(package_root).with_suffix("").parts)
        module = importlib.import_module(module_name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, BaseSettings)
                and value.__module__ == module_name
            ):
                found.add(value)
    return found


def undocumented(page: str) -> list[str]:
    """Settings classes with no table, neither their own nor a subclass's."""
    tables = [load(target) for target in documented(page)]
    return sorted(
        f"{cls.__module__}:{cls.__qualname__}"
        for cls in settings_classes()
        if not any(issubclass(shown, cls) for shown in tables)
    )


def main(argv: list[str] | None = None) -> int:
    """Write or check docs/configuration.md; the exit status says whether it is current."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help="regenerate the tables")
    action.add_argument("--check", action="store_true", help="fail if the page is stale")
    args = parser.parse_args(argv)
    page = PAGE.read_text(encoding="utf-8")
    try:
        fresh = render(page)
        missing = undocumented(page)
    except ConfigReferenceError as exc:
        print(f"config_reference: {exc}", file=sys.stderr)
        return 1
    if missing:
        print(
            "config_reference: no table in docs/configuration.md for "
            + ", ".join(missing)
            + " (add a settings-table marker)",
            file=sys.stderr,
        )
        return 1
    if args.write:
        PAGE.write_text(fresh, encoding="utf-8")
        return 0
    if fresh != page:
        print(
            "config_reference: docs/configuration.md is stale: run `make config-reference`",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

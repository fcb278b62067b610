"""Settings from the environment; a bad value is one line naming the variable the user set.

pydantic names a field by its place (``("server", "port")``) or by the alias it
was read under; the user set a variable, so the message names that:
``DS_SERVER__PORT='abc': Input should be a valid integer``.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, TypeVar

import pydantic_settings
from pydantic import AliasChoices, BaseModel, ValidationError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pydantic.fields import FieldInfo

Settings = TypeVar("Settings", bound=pydantic_settings.BaseSettings)


def load(settings_class: type[Settings], error: type[Exception]) -> Settings:
    """``settings_class()`` from the environment; ``error`` (one line) when a value is bad."""
    try:
        return settings_class()
    except ValidationError as exc:
        raise error(describe(exc, settings_class)) from None
    except pydantic_settings.SettingsError as exc:
        raise error(describe_source_error(exc, settings_class)) from None


def describe(exc: ValidationError, settings_class: type[pydantic_settings.BaseSettings]) -> str:
    """Each problem as ``VARIABLE='value': message``, joined by ``; ``."""
    problems = []
    for error in exc.errors():
        if not error["loc"]:  # a rule across settings: its message names them
            problems.append(str(error["msg"]))
            continue
        name = variable(settings_class, error["loc"])
        problems.append(f"{name}={error['input']!r}: {error['msg']}")
    return "; ".join(problems)


def describe_source_error(
    exc: pydantic_settings.SettingsError, settings_class: type[pydantic_settings.BaseSettings]
) -> str:
    """A value pydantic-settings could not decode: for a nested section given whole
    (``DS_SERVER='{...}'``) that isn't JSON, the variable; else pydantic-settings' words."""
    # pydantic-settings says 'error parsing value for field "server" from source ...'.
    field = re.search(r'field "([^"]+)"', str(exc))
    info = settings_class.model_fields.get(field.group(1)) if field else None
    if field is None or info is None or not _is_section(settings_class, info):
        return str(exc)
    name = variable(settings_class, (field.group(1),))
    return f"{name}: not a JSON object of its settings ({exc.__cause__ or exc})"


def variable(
    settings_class: type[pydantic_settings.BaseSettings], location: Sequence[int | str]
) -> str:
    """The environment variable of the field at ``location``: under the alias the user set
    (else the first), with the nested parts of a section (``DS_LIMITS__MAX_STREAM_BYTES``)."""
    prefix = str(settings_class.model_config.get("env_prefix") or "")
    delimiter = settings_class.model_config.get("env_nested_delimiter")
    first = str(location[0])
    name = prefix + first.upper()
    for field, info in settings_class.model_fields.items():
        names = [prefix + field.upper()]
        if isinstance(info.validation_alias, AliasChoices):
            names = [str(choice) for choice in info.validation_alias.choices]
        if first == field or first in names:
            name = next((env for env in names if env in os.environ), names[0])
            break
    if delimiter and len(location) > 1:
        name += delimiter + delimiter.join(str(part).upper() for part in location[1:])
    return name


def _is_section(settings_class: type[pydantic_settings.BaseSettings], info: FieldInfo) -> bool:
    section = info.annotation
    return bool(settings_class.model_config.get("env_nested_delimiter")) and (
        isinstance(section, type) and issubclass(section, BaseModel)
    )

"""The ``durable_streams`` source's options, read once into a frozen value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import msgspec
from ds_settings import defaults
from durable_sessions.protocol.offsets import BEGINNING, OffsetError, parse_offset
from durable_sessions.protocol.patterns import Pattern, PatternError, parse_patterns

from ds_spark.errors import DsSparkError
from ds_spark.tokens import token_of

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ds_spark.tokens import Token

DEFAULT_URL = defaults.SERVER_URL
BOOTSTRAP = "bootstrap"
EARLIEST = "earliest"
LATEST = "latest"
# Streams up to this many retained bytes are one partition; larger ones are split.
DEFAULT_SPLIT_BYTES = 128 * 1024 * 1024


class OptionError(DsSparkError):
    """An option the source cannot use."""


@dataclass(frozen=True, slots=True)
class Start:
    """Where a stream is read from: its bootstrap, its earliest retained message, or a position."""

    mode: str  # BOOTSTRAP, EARLIEST or "position"
    position: int = 0


@dataclass(frozen=True, slots=True)
class SourceOptions:
    url: str
    patterns: tuple[Pattern, ...]
    token: Token | None  # a string, or the file holding it (option tokenFile)
    default_start: Start
    starts: Mapping[str, Start]
    ends: Mapping[str, int]
    only_ended: bool
    split_bytes: int
    max_bytes_per_trigger: int | None

    def start_of(self, path: str) -> Start:
        return self.starts.get(path, self.default_start)


def parse_options(options: Mapping[str, str]) -> SourceOptions:
    """Check and convert the options Spark passes (keys are case-insensitive there)."""
    streams = options.get("streams") or options.get("path")
    if not streams:
        raise OptionError("the durable_streams source needs the option 'streams' (stream globs)")
    default_start, starts = _starts(options.get("startingOffsets", BOOTSTRAP))
    return SourceOptions(
        url=options.get("url", DEFAULT_URL),
        patterns=_patterns(streams),
        token=token_of(options),
        default_start=default_start,
        starts=starts,
        ends=_ends(options.get("endingOffsets", LATEST)),
        only_ended=options.get("onlyEndingStreams", "false").strip().lower() == "true",
        split_bytes=_positive(options, "splitBytes", DEFAULT_SPLIT_BYTES),
        max_bytes_per_trigger=(
            _positive(options, "maxBytesPerTrigger", 0) if "maxBytesPerTrigger" in options else None
        ),
    )


def _starts(text: str) -> tuple[Start, dict[str, Start]]:
    if text.lstrip().startswith("{"):
        per_stream = _json_object(text, "startingOffsets")
        return Start(BOOTSTRAP), {path: _start(value) for path, value in per_stream.items()}
    return _start(text), {}


def _start(text: str) -> Start:
    word = text.strip()
    if word in (BOOTSTRAP, EARLIEST):
        return Start(word)
    try:
        return Start("position", parse_offset(word))
    except OffsetError:
        raise OptionError(
            f"startingOffsets {text!r}: use 'bootstrap', 'earliest', {BEGINNING!r} or an offset"
        ) from None


def _ends(text: str) -> dict[str, int]:
    if text.strip() == LATEST:
        return {}
    ends: dict[str, int] = {}
    for path, value in _json_object(text, "endingOffsets").items():
        try:
            ends[path] = parse_offset(value)
        except OffsetError:
            raise OptionError(f"endingOffsets of {path}: {value!r} is not an offset") from None
    return ends


def _json_object(text: str, name: str) -> dict[str, str]:
    try:
        return msgspec.json.decode(text, type=dict[str, str])
    except msgspec.DecodeError:
        raise OptionError(f"{name} must be a word or a JSON object of stream -> offset") from None


def _positive(options: Mapping[str, str], name: str, default: int) -> int:
    text = options.get(name)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise OptionError(f"option {name} must be a positive number of bytes, not {text!r}")
    return value


def _patterns(text: str) -> tuple[Pattern, ...]:
    try:
        return parse_patterns(text, listable=True)
    except PatternError as exc:
        raise OptionError(str(exc)) from None

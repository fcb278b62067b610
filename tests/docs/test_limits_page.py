"""docs/run/limits.md names every limit setting, with the default the code has."""

from __future__ import annotations

import re
import sys

from doc_facts import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import config_reference

PAGE = ROOT / "docs" / "run" / "limits.md"
# The settings that bound a size, a count, a rate or a time a client can meet.
LIMIT = re.compile(
    r"^DS_(LIMITS__\w+|AUTH__MAX_\w+|PROXY__\w+(_PER_SEC|_BURST|_SUBJECTS)"
    r"|SUBSCRIPTIONS__\w+_BYTES|STORAGE__\w+_MAX_\w+|SYNC__(MAX_\w+|POST_MAX_BYTES|COMPACT_AFTER_BYTES))$"
)
TARGETS = [
    "ds_server.settings:Settings",
    "ds_proxy.settings:ProxySettings",
    "ds_sync.settings:Settings",
]


def limit_settings() -> dict[str, object]:
    """Each limit setting and its default."""
    found: dict[str, object] = {}
    for target in TARGETS:
        for names, info in config_reference.variables(config_reference.load(target)):
            for name in names:
                if LIMIT.match(name):
                    found[name] = info.default
    return found


def shown(value: object) -> set[str]:
    """How the page may write a default: 10485760 as 10 MiB, 1000 as 1,000, 0 as unbounded."""
    if isinstance(value, bool) or not isinstance(value, int):
        return {str(value)}
    forms = {str(value), f"{value:,}"}
    for unit, size in (("KiB", 1024), ("MiB", 1024**2), ("GiB", 1024**3)):
        if value and value % size == 0:
            forms.add(f"{value // size:,} {unit}")
    if value == 0:
        forms.add("unbounded")
    return forms


def test_every_limit_setting_is_on_the_page_with_its_default() -> None:
    settings = limit_settings()
    assert len(settings) >= 12, settings  # guards the pattern
    rows = [line for line in PAGE.read_text(encoding="utf-8").splitlines() if line.startswith("|")]
    problems = []
    for name, default in settings.items():
        row = next((r for r in rows if f"`{name}`" in r), None)
        if row is None:
            problems.append(f"{name} is not on the page")
        elif not any(form in row for form in shown(default)):
            problems.append(f"{name}: default {default!r} is not in its row: {row}")
    assert problems == []

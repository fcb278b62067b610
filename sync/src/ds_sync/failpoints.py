"""Crash points for the crash tests: ``DS_SYNC_FAILPOINTS=name=n,...`` SIGKILLs the
process the n-th time it passes ``name``.

The kill tests kill ds-sync at random moments; these name the moments that
matter most for exactly-once delivery (between staging, POSTing and
committing a batch), so each is tested every run. Unset, as in production,
``reached`` is one dictionary lookup.
"""

from __future__ import annotations

import os
import signal

VARIABLE = "DS_SYNC_FAILPOINTS"


def _parse(text: str) -> dict[str, int]:
    points: dict[str, int] = {}
    for part in text.split(","):
        name, _, count = part.strip().partition("=")
        if name:
            points[name] = int(count or "1")
    return points


_armed = _parse(os.environ.get(VARIABLE, ""))


def reached(name: str) -> None:
    """Pass the point ``name``: the process dies here if a test armed it for this pass."""
    if name not in _armed:
        return
    _armed[name] -= 1
    if _armed[name] <= 0:
        os.kill(os.getpid(), signal.SIGKILL)

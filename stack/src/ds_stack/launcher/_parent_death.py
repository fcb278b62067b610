"""Children that don't outlive their launcher: Linux's parent-death signal."""

from __future__ import annotations

import ctypes
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

_PR_SET_PDEATHSIG = 1


def die_with_parent(signum: int) -> Callable[[], None] | None:
    """A ``preexec_fn`` asking the kernel to send ``signum`` when the parent thread ends.

    It runs in the child after any change of user (which would clear it);
    None where the platform has no such thing.
    """
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    prctl = libc.prctl

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, signum, 0, 0, 0)

    return preexec

"""One ``make dev`` per state directory, and what a second one is told.

The running stack holds an exclusive ``flock`` on ``{state}/dev.lock`` (the
kernel drops it when the process dies, however it dies) and describes
itself in ``{state}/stack.json``: its pid, URLs and a token, which
``make analytics`` and ``make snapshots`` use to reach it.
"""

from __future__ import annotations

import fcntl
import json
import os
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path


class AlreadyRunning(RuntimeError):
    """Another stack holds the state directory."""


class NotRunning(RuntimeError):
    """No stack runs on the state directory."""


class StateLock:
    """The exclusive claim on a state directory while a stack runs there."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self.path = state_dir / "dev.lock"
        self.info_path = state_dir / "stack.json"
        self._file: IO[str] | None = None

    def acquire(self) -> None:
        """Claim the directory, or raise AlreadyRunning describing who has it."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        handle = self.path.open("a+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise AlreadyRunning(describe_running(self.state_dir)) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self._file = handle

    def publish(self, info: dict[str, Any]) -> None:
        """Describe the running stack (readable by its owner only: it holds a token)."""
        temporary = self.info_path.with_suffix(".tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as out:
            json.dump({"pid": os.getpid(), **info}, out, indent=2)
        temporary.replace(self.info_path)

    def release(self) -> None:
        """Forget the description and drop the claim."""
        if self._file is None:
            return
        self.info_path.unlink(missing_ok=True)
        self._file.close()
        self._file = None


def held(state_dir: Path) -> bool:
    """Whether a stack holds ``state_dir`` now."""
    path = state_dir / "dev.lock"
    if not path.exists():
        return False
    with path.open("a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False


def running_stack(state_dir: Path) -> dict[str, Any]:
    """The running stack's description; NotRunning if none runs (or it is still starting)."""
    if not held(state_dir):
        raise NotRunning(f"no `make dev` is running on {state_dir}")
    try:
        info: dict[str, Any] = json.loads((state_dir / "stack.json").read_text())
    except (OSError, ValueError):
        raise NotRunning(f"the `make dev` on {state_dir} is still starting") from None
    return info


def describe_running(state_dir: Path) -> str:
    """What to tell a second ``make dev``."""
    try:
        pid = (state_dir / "dev.lock").read_text().strip()
    except OSError:
        pid = "?"
    where = ""
    try:
        info = json.loads((state_dir / "stack.json").read_text())
        where = f", gateway {info['gateway_url']}"
    except (OSError, ValueError, KeyError):
        where = ", still starting"
    return (
        f"another `make dev` is already running on {state_dir} (pid {pid}{where}); "
        f"use it, or stop it with Ctrl-C in its terminal (or `kill {pid}`)"
    )

"""One process at a time per data directory: an exclusive ``flock`` on ``{directory}/LOCK``.

The lock is the kernel's, held through an open file descriptor, so it ends
with the process however the process ends (``kill -9`` included) and is
never left stale. The descriptor is not inherited by child programs
(Python opens files close-on-exec). The holder writes its pid into the
file so that whoever is refused can say who holds the directory.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

LOCK_FILE = "LOCK"


class DirectoryLockError(Exception):
    """The directory can't be locked; the message says why."""

    def __init__(self, directory: Path, message: str) -> None:
        super().__init__(message)
        self.directory = directory


class DirectoryInUse(DirectoryLockError):
    """Another process (or another store in this one) holds the directory."""

    def __init__(self, directory: Path, holder_pid: int | None) -> None:
        holder = "another process" if holder_pid is None else f"pid {holder_pid}"
        super().__init__(
            directory, f"{directory.absolute()} is in use by another ds-server ({holder})"
        )
        self.holder_pid = holder_pid


class DirectoryUnusable(DirectoryLockError):
    """The directory can't be created or written (a file, no permission, read-only...)."""

    def __init__(self, directory: Path, error: OSError) -> None:
        if isinstance(error, FileExistsError | NotADirectoryError):
            reason = "not a directory"  # mkdir found a file in the way
        else:
            reason = error.strerror or str(error)
        elsewhere = error.filename and str(error.filename) != str(directory)
        where = f" ({error.filename})" if elsewhere else ""
        super().__init__(directory, f"{directory.absolute()} can't be used: {reason}{where}")


class DirectoryLock:
    """An exclusive lock on a directory, held until ``release`` or the end of the process."""

    def __init__(self, directory: Path, fd: int) -> None:
        self.directory = directory
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, directory: Path) -> DirectoryLock:
        """Create ``directory`` if needed and lock it; raise at once if someone holds it."""
        try:
            directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise DirectoryUnusable(directory, error) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_pid(fd)
            os.close(fd)
            raise DirectoryInUse(directory, holder) from None
        except OSError as error:
            os.close(fd)
            raise DirectoryUnusable(directory, error) from None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except OSError as error:
            # Locked, but not writable (a full disk): a directory we can't store in.
            os.close(fd)
            raise DirectoryUnusable(directory, error) from None
        return cls(directory, fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Unlock (closing the descriptor does it); the file stays, holding no lock."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


def _read_pid(fd: int) -> int | None:
    # Empty if the holder has locked but not yet written its pid.
    with contextlib.suppress(OSError, ValueError):
        return int(os.pread(fd, 32, 0).decode("ascii").strip())
    return None

"""Who Postgres runs as: the caller, or a dedicated system user when the caller is root.

Postgres refuses to run as root. These machines run everything as root, so
the server runs as ``ds-postgres``, a system user created on first use. The
user has no supplementary groups, so only the owner, group and other bits
of a path decide what it can reach; ``unreachable`` checks them up front so
a wrong permission is reported by name instead of as an initdb failure.
"""

from __future__ import annotations

import os
import pwd
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

ACCOUNT_NAME = "ds-postgres"
# useradd may find /etc/passwd locked by another useradd (exit 10): try again.
_USERADD_TRIES = 5


class AccountError(RuntimeError):
    """The dedicated user could not be created."""


@dataclass(frozen=True, slots=True)
class Account:
    """A user to run the server as (only when the caller is root)."""

    name: str
    uid: int
    gid: int


def server_account(name: str = ACCOUNT_NAME) -> Account | None:
    """The user to run Postgres as: None when the caller isn't root, else ``name`` (created)."""
    if os.geteuid() != 0:
        return None
    entry = _lookup(name) or _create(name)
    return Account(name=entry.pw_name, uid=entry.pw_uid, gid=entry.pw_gid)


def unreachable(path: Path, account: Account, need: int) -> Path | None:
    """The first part of ``path`` the account can't use, or None.

    Every ancestor directory needs search (x) permission; ``path`` itself
    needs ``need`` (e.g. ``R_OK | X_OK``).
    """
    resolved = path.resolve()
    for directory in reversed(resolved.parents):
        if not _allowed(directory, account, os.X_OK):
            return directory
    return None if _allowed(resolved, account, need) else resolved


def chown_tree(path: Path, account: Account) -> None:
    """Give ``path`` and everything below it to the account."""
    os.chown(path, account.uid, account.gid)
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            os.chown(Path(root) / name, account.uid, account.gid, follow_symlinks=False)


def _allowed(path: Path, account: Account, need: int) -> bool:
    info = path.stat()
    if info.st_uid == account.uid:
        shift = 6
    elif info.st_gid == account.gid:
        shift = 3
    else:
        shift = 0
    granted = (info.st_mode >> shift) & 0o7
    wanted = (4 if need & os.R_OK else 0) | (2 if need & os.W_OK else 0)
    wanted |= 1 if need & os.X_OK else 0
    return granted & wanted == wanted


def _lookup(name: str) -> pwd.struct_passwd | None:
    try:
        return pwd.getpwnam(name)
    except KeyError:
        return None


def _create(name: str) -> pwd.struct_passwd:
    command = ["useradd", "--system", "--user-group", "--no-create-home"]
    command += ["--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", name]
    detail = ""
    for attempt in range(_USERADD_TRIES):
        try:
            result = subprocess.run(command, capture_output=True, text=True, check=False)
        except FileNotFoundError:
            raise AccountError("useradd is not installed; run as a non-root user") from None
        # Another process (a parallel test run) may have created it meanwhile.
        entry = _lookup(name)
        if entry is not None:
            return entry
        detail = result.stderr.strip()
        time.sleep(0.2 * (attempt + 1))
    raise AccountError(f"could not create the system user {name!r}: {detail}")

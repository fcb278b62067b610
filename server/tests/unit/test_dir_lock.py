"""The data directory lock: exclusive, says who holds it, creates what is missing."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest
from ds_server.stores.dir_lock import DirectoryInUse, DirectoryLock, DirectoryUnusable

if TYPE_CHECKING:
    from pathlib import Path


def test_a_held_directory_is_refused_with_the_holders_pid(tmp_path: Path) -> None:
    held = DirectoryLock.acquire(tmp_path / "a" / "b")
    try:
        assert (tmp_path / "a" / "b" / "LOCK").read_text() == f"{os.getpid()}\n"
        with pytest.raises(DirectoryInUse) as refused:
            DirectoryLock.acquire(tmp_path / "a" / "b")
        assert refused.value.holder_pid == os.getpid()
        assert str(refused.value) == (
            f"{tmp_path}/a/b is in use by another ds-server (pid {os.getpid()})"
        )
    finally:
        held.release()
    again = DirectoryLock.acquire(tmp_path / "a" / "b")
    assert again.held
    again.release()
    assert not again.held


def test_a_holder_that_has_not_written_its_pid_yet_is_another_process(tmp_path: Path) -> None:
    held = DirectoryLock.acquire(tmp_path)
    (tmp_path / "LOCK").write_text("")  # as between the holder's flock and its write
    try:
        with pytest.raises(DirectoryInUse, match=r"\(another process\)$"):
            DirectoryLock.acquire(tmp_path)
    finally:
        held.release()


def test_a_file_in_the_way_is_unusable(tmp_path: Path) -> None:
    (tmp_path / "file").write_bytes(b"")
    for path in (tmp_path / "file", tmp_path / "file" / "below"):
        with pytest.raises(DirectoryUnusable) as refused:
            DirectoryLock.acquire(path)
        assert str(refused.value) == f"{path} can't be used: not a directory"

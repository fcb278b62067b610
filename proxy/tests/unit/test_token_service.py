"""ds-token-service's pieces: grants, the files it writes, and its health check."""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING

import jwt
import pytest
from ds_proxy.keys import load_private_key, public_pem
from ds_proxy.token_service import (
    Grant,
    expiry,
    fresh,
    main,
    read_manifest,
    renew,
    write_atomically,
    write_manifest,
)
from ds_proxy.tokens import TEST_AUDIENCE

if TYPE_CHECKING:
    from pathlib import Path


def test_a_grant_names_a_file_a_subject_and_buckets() -> None:
    assert Grant.parse("ds-sync:ds-sync:*") == Grant("ds-sync", "ds-sync", ("*",))
    assert Grant.parse("hb:heartbeat:a, b") == Grant("hb", "heartbeat", ("a", "b"))


@pytest.mark.parametrize("text", ["ds-sync", "ds-sync:sub", "a/b:s:*", ".hidden:s:*", ":s:*"])
def test_a_bad_grant_is_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="FILE:SUB:BUCKETS"):
        Grant.parse(text)


def test_each_file_gets_a_signed_token_of_its_subject_and_buckets(tmp_path: Path) -> None:
    grants = [Grant("ds-sync", "ds-sync", ("*",)), Grant("hb", "heartbeat", ("session-events",))]
    renew(tmp_path, grants, 3600, load_private_key())
    claims = jwt.decode(
        (tmp_path / "hb").read_text().strip(),
        public_pem(load_private_key()),
        algorithms=["RS256"],
        audience=TEST_AUDIENCE,
    )
    assert claims["sub"] == "heartbeat"
    assert claims["ds"] == {"read": ["session-events"], "write": ["session-events"]}
    assert abs(claims["exp"] - (time.time() + 3600)) < 5
    assert expiry((tmp_path / "ds-sync").read_text()) == claims["exp"]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["ds-sync", "hb"]  # no leftovers


def test_a_file_is_replaced_whole(tmp_path: Path) -> None:
    path = tmp_path / "t"
    write_atomically(path, "one\n")
    inode = path.stat().st_ino
    write_atomically(path, "two\n")
    assert path.read_text() == "two\n"
    assert path.stat().st_ino != inode  # a new file renamed over the old one
    assert oct(path.stat().st_mode & 0o777) == "0o644"


def test_the_check_reports_missing_garbled_and_nearly_expired_files(tmp_path: Path) -> None:
    grants = [Grant("a", "a", ("*",)), Grant("b", "b", ("*",)), Grant("c", "c", ("*",))]
    renew(tmp_path, grants[:1], 3600, load_private_key())
    (tmp_path / "b").write_text("garbage")
    renew(tmp_path, grants[2:], 60, load_private_key())  # far less than a quarter of 3600 s
    problems = fresh(tmp_path, grants, 3600)
    assert [problem.split(":")[0] for problem in problems] == [
        str(tmp_path / "b"),
        str(tmp_path / "c"),
    ]
    assert "not a token" in problems[0]
    assert "expires in" in problems[1]
    (tmp_path / "b").unlink()
    assert "No such file" in fresh(tmp_path, grants[1:2], 3600)[0]


def test_check_mode_exits_nonzero_with_the_problem(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="No such file"):
        main(["--dir", str(tmp_path), "--token", "a:a:*", "--check"])
    renew(tmp_path, [Grant("a", "a", ("*",))], 3600, load_private_key())
    main(["--dir", str(tmp_path), "--token", "a:a:*", "--check"])


def test_check_mode_without_tokens_checks_what_the_running_service_keeps(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="no service keeps"):
        main(["--dir", str(tmp_path), "--check"])
    grants = [Grant("a", "a", ("x", "y"))]
    write_manifest(tmp_path, grants, 3600)
    assert read_manifest(tmp_path) == (grants, 3600)
    with pytest.raises(SystemExit, match="No such file"):
        main(["--dir", str(tmp_path), "--check"])
    renew(tmp_path, grants, 3600, load_private_key())
    main(["--dir", str(tmp_path), "--check"])

"""Component logs rotated by size: bounded on disk, no line lost, doubled or cut at a switch."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import pytest
from ds_stack.launcher import LogRotation, Process, ProcessSpec
from ds_stack.launcher.log_pump import RotatingLog

if TYPE_CHECKING:
    from pathlib import Path

# Numbered lines as fast as the child can write them, in writes of several
# lines at a time (as a logger's buffer flushes), then it waits to be stopped.
_WRITER = """
import sys, time
count, width = int(sys.argv[1]), int(sys.argv[2])
out = sys.stdout.buffer
batch = []
for n in range(count):
    batch.append(b"line %08d %s\\n" % (n, b"x" * width))
    if len(batch) == 7:
        out.write(b"".join(batch)); out.flush(); batch = []
out.write(b"".join(batch)); out.write(b"done\\n"); out.flush()
time.sleep(600)
"""


def _files(log: Path) -> list[Path]:
    """The log's files, oldest first."""
    numbered = sorted(log.parent.glob(log.name + ".*"), key=lambda p: -int(p.suffix[1:]))
    return [*numbered, log]


def _writer(log: Path, rotation: LogRotation, count: int, width: int = 40) -> Process:
    return Process(
        ProcessSpec(
            "writer",
            (sys.executable, "-c", _WRITER, str(count), str(width)),
            ready_log="done",
            log_path=log,
            log_rotation=rotation,
        )
    )


def test_a_full_log_moves_aside_and_nothing_between_the_files_is_lost(tmp_path: Path) -> None:
    log = tmp_path / "writer.log"
    rotation = LogRotation(max_bytes=4096, keep=3)
    child = _writer(log, rotation, count=5000)
    child.start()  # ready once "done" is written: everything before it is in the files
    child.stop()
    files = _files(log)
    assert [p.name for p in files] == [
        "writer.log.3",
        "writer.log.2",
        "writer.log.1",
        "writer.log",
    ]
    assert all(p.stat().st_size <= rotation.max_bytes for p in files)
    lines = b"".join(p.read_bytes() for p in files).splitlines()
    assert lines[-1] == b"done"
    numbers = [int(line.split()[1]) for line in lines[:-1]]
    # What is kept is the end of the output, in order: no gap, no line twice, none cut.
    assert numbers == list(range(5000 - len(numbers), 5000))
    assert all(line.endswith(b"x" * 40) for line in lines[:-1])
    # Each full file was moved aside only when the next line would not fit.
    assert all(p.stat().st_size > rotation.max_bytes - 60 for p in files[:-1])


def test_keep_zero_keeps_only_the_current_file(tmp_path: Path) -> None:
    log = tmp_path / "writer.log"
    child = _writer(log, LogRotation(max_bytes=2048, keep=0), count=1000)
    child.start()
    child.stop()
    assert _files(log) == [log]
    assert log.stat().st_size <= 2048
    assert log.read_bytes().endswith(b"done\n")


def test_an_oversized_log_from_an_earlier_run_is_moved_aside_at_the_first_line(
    tmp_path: Path,
) -> None:
    log = tmp_path / "writer.log"
    log.write_bytes(b"old\n" * 3000)  # 12 kB, past the limit: an earlier run with a larger one
    child = _writer(log, LogRotation(max_bytes=8192, keep=1), count=10)
    child.start()
    child.stop()
    assert (tmp_path / "writer.log.1").read_bytes() == b"old\n" * 3000
    assert log.read_bytes().startswith(b"line 00000000")


def test_a_line_longer_than_the_limit_is_written_whole_into_a_file_of_its_own(
    tmp_path: Path,
) -> None:
    log = tmp_path / "writer.log"
    child = _writer(log, LogRotation(max_bytes=1024, keep=5), count=3, width=3000)
    child.start()
    child.stop()
    files = _files(log)
    assert b"".join(p.read_bytes() for p in files).splitlines() == [
        b"line %08d %s" % (n, b"x" * 3000) for n in range(3)
    ] + [b"done"]
    assert [len(p.read_bytes().splitlines()) for p in files] == [1, 1, 1, 1]


def test_readiness_by_log_counts_only_this_start_through_the_pump(tmp_path: Path) -> None:
    log = tmp_path / "writer.log"
    log.write_bytes(b"done\n")  # an earlier run's
    child = _writer(log, LogRotation(max_bytes=1 << 20, keep=1), count=2)
    child.start()
    assert (
        log.read_bytes()
        == b"done\nline 00000000 " + b"x" * 40 + b"\nline 00000001 " + (b"x" * 40) + b"\ndone\n"
    )
    child.stop()


_LAST_WORDS = """
import signal, sys, time
def leave(*_):
    sys.stdout.write("stopping\\n" * 100); sys.stdout.flush(); sys.exit(0)
signal.signal(signal.SIGTERM, leave)
print("up", flush=True)
time.sleep(600)
"""


def _child(log: Path, script: str) -> Process:
    """A Python child, ready once it wrote ``up``, its log through the pump."""
    return Process(
        ProcessSpec(
            "child",
            (sys.executable, "-c", script),
            ready_log="up",
            log_path=log,
            log_rotation=LogRotation(max_bytes=1 << 20, keep=1),
        )
    )


def test_what_a_child_writes_as_it_stops_is_in_the_file_when_stop_returns(
    tmp_path: Path,
) -> None:
    log = tmp_path / "child.log"
    child = _child(log, _LAST_WORDS)
    child.start()
    assert child.stop() == 0
    assert log.read_text() == "up\n" + "stopping\n" * 100


def test_a_child_killed_mid_line_leaves_what_it_wrote(tmp_path: Path) -> None:
    log = tmp_path / "child.log"
    script = (
        "import sys, time; sys.stdout.write('up\\npartial'); sys.stdout.flush(); time.sleep(600)"
    )
    child = _child(log, script)
    child.start()
    child.kill()
    assert log.read_text() == "up\npartial"


def test_a_log_that_cannot_be_written_stops_the_launch(tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("")
    child = _writer(blocked / "writer.log", LogRotation(max_bytes=1024, keep=1), count=1)
    with pytest.raises(FileExistsError):
        child.start()
    assert not child.running


def test_rotation_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="size limit must be positive"):
        LogRotation(max_bytes=0, keep=1)
    with pytest.raises(ValueError, match="0 or more"):
        LogRotation(max_bytes=1, keep=-1)


def test_rotating_log_alone(tmp_path: Path) -> None:
    log = RotatingLog(tmp_path / "a.log", LogRotation(max_bytes=10, keep=2))
    for chunk in (b"12345\n", b"6789\n", b"abc\n", b"defghij\n", b"k\n"):
        log.write(chunk)
    log.close()
    assert (tmp_path / "a.log.2").read_bytes() == b"12345\n"
    assert (tmp_path / "a.log.1").read_bytes() == b"6789\nabc\n"
    assert (tmp_path / "a.log").read_bytes() == b"defghij\nk\n"


def test_a_line_in_pieces_is_never_split_between_files(tmp_path: Path) -> None:
    # The pump hands over a line longer than its read size in pieces.
    log = RotatingLog(tmp_path / "a.log", LogRotation(max_bytes=10, keep=2))
    for chunk in (b"first\n", b"a long li", b"ne in pie", b"ces\n", b"next\n"):
        log.write(chunk)
    log.close()
    assert (tmp_path / "a.log.2").read_bytes() == b"first\n"
    assert (tmp_path / "a.log.1").read_bytes() == b"a long line in pieces\n"
    assert (tmp_path / "a.log").read_bytes() == b"next\n"

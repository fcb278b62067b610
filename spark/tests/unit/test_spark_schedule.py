"""The snapshot schedule: runs one after another, never two at once, failures don't stop it."""

from __future__ import annotations

import sys
import threading
import time
from typing import TYPE_CHECKING

from ds_spark.schedule import first_delay, run_every

if TYPE_CHECKING:
    from pathlib import Path

# A "job" that records when it starts and ends, takes a while, and exits with argv[2].
_JOB = """
import sys, time
with open(sys.argv[1], "a") as f:
    f.write("start\\n")
time.sleep(0.3)
with open(sys.argv[1], "a") as f:
    f.write("end\\n")
sys.exit(int(sys.argv[2]))
"""


def _lines(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def _schedule_until(path: Path, status: int, runs: int) -> tuple[int, list[str]]:
    stop = threading.Event()
    made: list[int] = []
    argv = [sys.executable, "-c", _JOB, str(path), str(status)]
    # Every 0.05 s, for a job taking 0.3 s: overlapping runs would show at once.
    worker = threading.Thread(target=lambda: made.append(run_every(argv, 0.05, stop, first_secs=0)))
    worker.start()
    while _lines(path).count("end") < runs:
        time.sleep(0.05)
    stop.set()
    worker.join(timeout=30)
    assert not worker.is_alive()
    return made[0], _lines(path)


def test_runs_never_overlap(tmp_path: Path) -> None:
    made, lines = _schedule_until(tmp_path / "runs", 0, runs=3)
    assert made >= 3
    # A run that was cut short by the stop may have started without ending.
    whole = lines if lines[-1] == "end" else lines[:-1]
    assert whole == ["start", "end"] * (len(whole) // 2)


def test_a_failed_run_does_not_stop_the_schedule(tmp_path: Path) -> None:
    made, _ = _schedule_until(tmp_path / "runs", 3, runs=2)
    assert made >= 2


def test_a_stop_during_a_run_ends_it(tmp_path: Path) -> None:
    path = tmp_path / "runs"
    stop = threading.Event()
    argv = [sys.executable, "-c", "import time; open(__import__('sys').argv[1], 'w'); "
            "time.sleep(600)", str(path)]  # fmt: skip
    worker = threading.Thread(target=run_every, args=(argv, 3600, stop), kwargs={"first_secs": 0})
    worker.start()
    while not path.exists():
        time.sleep(0.05)
    stop.set()
    worker.join(timeout=60)
    assert not worker.is_alive()


def test_the_first_run_comes_soon_but_not_at_once() -> None:
    assert first_delay(3600) == 60
    assert first_delay(5) == 5

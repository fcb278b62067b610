"""``ds-spark snapshots --every SECS``: the snapshot job on a schedule, as long-lived stacks need.

Snapshots are what bound session streams (sessions.md §6), so a stack that
runs for months runs the job again and again. Each run is a process of its
own: a Spark start costs a JVM (seconds and hundreds of MB), which is held
only while a run lasts, not between runs. Runs never overlap: the next one
starts ``every`` seconds after the previous one started, or as soon as it
ended if it took longer. A failed run is logged with its exit status and
the schedule goes on (the next run retries everything). A stop (SIGTERM,
Ctrl-C) ends the running job with SIGTERM, waits for it, and returns.
"""

from __future__ import annotations

import logging
import subprocess
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import threading
    from collections.abc import Sequence

log = logging.getLogger("ds_spark.schedule")

# Printed once the schedule is set: the launcher's readiness line.
SCHEDULED = "ds-spark: snapshots scheduled"
_POLL_SECS = 0.5
_STOP_TIMEOUT_SECS = 60.0


def first_delay(every_secs: float) -> float:
    """When the first run starts: soon, so a stack restarted more often than ``every`` still
    gets its snapshots, but not while the rest of the stack is still starting."""
    return min(every_secs, 60.0)


def run_every(
    argv: Sequence[str], every_secs: float, stop: threading.Event, *, first_secs: float
) -> int:
    """Run ``argv`` after ``first_secs``, then every ``every_secs`` until ``stop``; how many."""
    runs = 0
    log.info("%s: every %gs, the first in %gs", SCHEDULED, every_secs, first_secs)
    if stop.wait(first_secs):
        return runs
    while not stop.is_set():
        started = time.monotonic()
        runs += 1
        status = _run_once(argv, stop)
        took = time.monotonic() - started
        if status == 0:
            log.info("snapshot run %d done in %.1fs", runs, took)
        elif status is not None:
            log.warning("snapshot run %d failed (status %d) after %.1fs", runs, status, took)
        stop.wait(max(0.0, started + every_secs - time.monotonic()))
    return runs


def _run_once(argv: Sequence[str], stop: threading.Event) -> int | None:
    """One run to its end; None when a stop cut it short."""
    child = subprocess.Popen(list(argv))
    while True:
        try:
            return child.wait(timeout=_POLL_SECS)
        except subprocess.TimeoutExpired:
            if stop.is_set():
                break
    child.terminate()
    try:
        child.wait(timeout=_STOP_TIMEOUT_SECS)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
    return None

"""Load generators as child processes, with the CPU time each one used.

Every generator (wrk, a Node script, a Python client) runs in its own
process so its CPU time can be told apart from the server's and from the
orchestrator's. Generators that can report the CPU and wall time of their
measured work do so in their output; for the others (wrk) ``os.wait4`` gives
the whole process's rusage when it exits.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ds_bench.servers import NODE_DIR

if TYPE_CHECKING:
    from ds_bench.servers import ServerProcess


@dataclass(frozen=True, slots=True)
class Usage:
    """CPU seconds (user + system) a process used over ``wall_s`` seconds."""

    cpu_s: float
    wall_s: float

    def alongside(self, other: Usage) -> Usage:
        """Two processes that ran at the same time: CPU adds up, wall time overlaps."""
        return Usage(self.cpu_s + other.cpu_s, max(self.wall_s, other.wall_s))

    def then(self, other: Usage) -> Usage:
        """Two processes that ran one after the other."""
        return Usage(self.cpu_s + other.cpu_s, self.wall_s + other.wall_s)


def node_argv(script: str, *args: str) -> list[str]:
    """The command line of a Node generator in ``bench/node``."""
    return ["node", str(NODE_DIR / script), *args]


def python_argv(kind: str, *args: str) -> list[str]:
    """The command line of a Python generator (``ds_bench.pygen``)."""
    return [sys.executable, "-m", "ds_bench.pygen", kind, *args]


class Generator:
    """One generator process: read its ready lines, then its final output and usage."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv
        # Closed by finish() or abandon(); the generator writes to it for its whole life.
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )

    def read_line(self, timeout: float) -> str:
        """The next line the generator prints (a readiness signal), within ``timeout``."""
        stdout = self.process.stdout
        assert stdout is not None
        ready, _, _ = select.select([stdout], [], [], timeout)
        line = stdout.readline().decode() if ready else ""
        if not line:
            problem = f"silent for {timeout:.0f} s" if not ready else "ended early"
            detail = self._describe()
            self.abandon()
            raise RuntimeError(f"generator {problem}: {detail}")
        return line.strip()

    def finish(self, timeout: float, *, close_stdin: bool = True) -> tuple[str, Usage]:
        """Collect the output and reap the process with its rusage.

        Closing stdin first is the signal for a holding generator to stop; a
        generator that ends on its own is left to do so (``close_stdin=False``).
        """
        assert self.process.stdout is not None
        if close_stdin:
            self._close_stdin()
        watchdog = threading.Timer(timeout, self._kill)
        watchdog.start()
        try:
            output = self.process.stdout.read().decode()
            _, status, rusage = os.wait4(self.process.pid, 0)
        finally:
            watchdog.cancel()
        wall = time.perf_counter() - self.started
        self.process.returncode = os.waitstatus_to_exitcode(status)
        try:
            if self.process.returncode != 0:
                raise RuntimeError(
                    f"generator failed ({self.process.returncode}): {self._describe()}\n{output}"
                )
        finally:
            self._close()
        return output, _reported(output) or Usage(rusage.ru_utime + rusage.ru_stime, wall)

    def abandon(self) -> None:
        """Kill the process if it still runs, reap it, release its pipes; idempotent."""
        if self.process.returncode is None:
            self._kill()
            self.process.wait()
        self._close()

    def _kill(self) -> None:
        # Not Popen.kill(): it polls, and a poll from the watchdog thread could
        # reap the child before finish() gets its rusage from wait4.
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.process.pid, signal.SIGKILL)

    def _close_stdin(self) -> None:
        assert self.process.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            self.process.stdin.close()

    def _close(self) -> None:
        self._close_stdin()
        assert self.process.stdout is not None
        self.process.stdout.close()
        self._stderr.close()

    def _describe(self) -> str:
        if self._stderr.closed:
            return " ".join(self.argv[:4])
        self._stderr.seek(0)
        tail = self._stderr.read()[-2000:].decode(errors="replace")
        return f"{' '.join(self.argv[:4])} ...\n{tail}"


def _reported(output: str) -> Usage | None:
    """The usage a generator reports for its measured work, if it does.

    Node and Python generators time their own work, leaving out interpreter
    start-up and imports; wrk does not, and gets its whole-process rusage.
    """
    lines = output.strip().splitlines()
    try:
        last = json.loads(lines[-1]) if lines else None
    except ValueError:
        return None
    if not isinstance(last, dict) or not isinstance(last.get("usage"), dict):
        return None
    return Usage(float(last["usage"]["cpu_s"]), float(last["usage"]["wall_s"]))


def run_generator(argv: list[str], timeout: float) -> tuple[str, Usage]:
    """Run a generator to completion; its stdout and usage."""
    return Generator(argv).finish(timeout)


def run_against(server: ServerProcess, argv: list[str], timeout: float) -> tuple[str, Usage, float]:
    """Run a generator to completion; its stdout, its usage, the server's CPU meanwhile."""
    before = server.cpu_seconds()
    output, usage = run_generator(argv, timeout)
    return output, usage, server.cpu_seconds() - before

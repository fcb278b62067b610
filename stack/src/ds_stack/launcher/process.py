"""Start a child process, await its readiness, stop, kill or restart it.

Before it starts anything, a launch checks that the child's ports are free
(naming the holder of a taken one); a readiness answer counts only if the
child it started, or a descendant, owns the listening socket.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import threading
import time
from typing import IO, TYPE_CHECKING, Self

from ds_stack import ports as port_owners
from ds_stack.launcher import readiness
from ds_stack.launcher._parent_death import die_with_parent
from ds_stack.launcher.log_pump import LogPump, RotatingLog
from ds_stack.launcher.service import Service

if TYPE_CHECKING:
    from collections.abc import Callable

    from ds_stack.launcher.spec import ProcessSpec


# How long a stopped child's output may still be arriving (from descendants
# that outlive it) before stop() returns; the pump goes on in the background.
_PUMP_DRAIN_SECS = 2.0


class LaunchError(RuntimeError):
    """A child did not start or get ready, or something else answered in its place."""


class Process(Service):
    """One child process, launched from ``spec``; reusable (``restart``)."""

    def __init__(self, spec: ProcessSpec) -> None:
        self.spec = spec
        self.ready_secs: float | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._log_start = 0
        self._pump: LogPump | None = None
        self._started_at = 0.0

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def pid(self) -> int | None:
        """The child's pid while it has one."""
        return None if self._process is None else self._process.pid

    def poll(self) -> int | None:
        """The exit status, or None while running (or never started)."""
        return None if self._process is None else self._process.poll()

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self) -> None:
        """Launch, then wait until ready (see ``launch`` and ``wait_ready``)."""
        self.launch()
        self.wait_ready()

    def launch(self) -> None:
        """Start the child without waiting for it.

        Raises ``ports.PortInUse`` before starting anything if a port it
        needs is taken.
        """
        if self.running:
            raise LaunchError(f"{self.name} is already running (pid {self.pid})")
        spec = self.spec
        port_owners.require_free(spec.ports_required_free)
        preexec = None
        if spec.die_with_parent and threading.current_thread() is threading.main_thread():
            # The signal goes when the launching *thread* ends: only the main thread's is safe.
            preexec = die_with_parent(spec.stop_signal)
        rotated = None
        with contextlib.ExitStack() as opened:
            log: IO[bytes] | int | None = None
            if spec.log_path is not None and spec.log_rotation is not None:
                # Opened before the child starts: a log that can't be written stops the launch.
                rotated = RotatingLog(spec.log_path, spec.log_rotation)
                log = subprocess.PIPE
            elif spec.log_path is not None:
                spec.log_path.parent.mkdir(parents=True, exist_ok=True)
                # The child keeps its own descriptor; ours closes once it has started.
                opened_log = opened.enter_context(spec.log_path.open("ab"))
                self._log_start = opened_log.tell()
                log = opened_log
            self._started_at = time.monotonic()
            self.ready_secs = None
            self._process = self._popen(spec, log, preexec, rotated)
        if rotated is not None:
            assert self._process.stdout is not None
            self._pump = LogPump(self._process.stdout, rotated, watch=spec.ready_log)

    @staticmethod
    def _popen(
        spec: ProcessSpec,
        log: IO[bytes] | int | None,
        preexec: Callable[[], None] | None,
        rotated: RotatingLog | None,
    ) -> subprocess.Popen[bytes]:
        try:
            return subprocess.Popen(
                list(spec.argv),
                env=None if spec.env is None else dict(spec.env),
                cwd=spec.cwd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT if log is not None else None,
                start_new_session=spec.new_session,
                preexec_fn=preexec,
                user=spec.user,
                group=spec.group,
                extra_groups=None if spec.user is None else [],
            )
        except BaseException:
            if rotated is not None:
                rotated.close()  # no pump will
            raise

    def wait_ready(self) -> None:
        """Poll until ready; on failure stop the child and raise LaunchError."""
        spec = self.spec
        deadline = self._started_at + spec.ready_timeout_secs
        while True:
            assert self._process is not None, "launch() first"
            status = self._process.poll()
            if status is not None:
                self.stop()
                raise LaunchError(f"{self.name} exited early (status {status}){self.log_hint()}")
            if self._probe():
                self._require_served_by_child()
                self.ready_secs = time.monotonic() - self._started_at
                return
            if time.monotonic() > deadline:
                self.stop()
                raise LaunchError(
                    f"{self.name} not ready after {spec.ready_timeout_secs:g}s{self.log_hint()}"
                )
            time.sleep(spec.poll_secs)

    def _probe(self) -> bool:
        spec = self.spec
        if spec.ready_url is not None and not readiness.http_ok(spec.ready_url):
            return False
        if spec.ready is not None and not spec.ready():
            return False
        if spec.ready_log is None:
            return True
        if self._pump is not None:
            return self._pump.seen.is_set()
        return spec.log_path is not None and readiness.logged_since(
            spec.log_path, self._log_start, spec.ready_log
        )

    def _require_served_by_child(self) -> None:
        # A 200 proves only that *something* answers on the port: perhaps a
        # stranger that took it after the free-port check.
        port = self.spec.port_served
        if port is None or self._process is None:
            return
        pid = self._process.pid
        owned = port_owners.listened_by(port, pid)
        # Without /proc (owned is None), the live child and the free-port check must do.
        if self._process.poll() is None and owned is not False:
            return
        holder = port_owners.describe_holders(port) or "another process"
        self.stop()
        raise LaunchError(
            f"port {port} answered for {self.name}, but from {holder}, "
            f"not from the {self.name} just started (pid {pid}){self.log_hint()}"
        )

    def log_hint(self) -> str:
        """``; see LOG`` and the log's last lines, for error messages (empty without a log)."""
        path = self.spec.log_path
        if path is None:
            return ""
        lines = readiness.tail(path)
        shown = "".join(f"\n    {line}" for line in lines)
        return f"; see {path}{':' if shown else ''}{shown}"

    def stop(self) -> int | None:
        """Ask it to exit (``stop_signal``), SIGKILL after the timeout; its exit status."""
        process, self._process = self._process, None
        status = None
        if process is not None:
            if process.poll() is None:
                process.send_signal(self.spec.stop_signal)
                try:
                    process.wait(timeout=self.spec.stop_timeout_secs)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            status = process.returncode
        self._release()
        return status

    def kill(self) -> None:
        """SIGKILL, as a crash would; wait for it to be gone."""
        process, self._process = self._process, None
        if process is not None:
            process.kill()
            process.wait()
        self._release()

    def send_signal(self, signum: int) -> None:
        """Send ``signum`` to the child, if it runs."""
        if self.running:
            assert self._process is not None
            self._process.send_signal(signum)

    def restart(self) -> None:
        """Stop (if running), then start again from the same spec."""
        self.stop()
        self.start()

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the child to exit by itself; its exit status."""
        if self._process is None:
            raise LaunchError(f"{self.name} is not running")
        return self._process.wait(timeout=timeout)

    def _release(self) -> None:
        pump, self._pump = self._pump, None
        if pump is not None:
            # The last lines the child wrote reach the file before stop() returns.
            pump.join(_PUMP_DRAIN_SECS)
        for path in self.spec.owned_files:
            path.unlink(missing_ok=True)

    def __enter__(self) -> Self:
        # A running child is entered as it is (``start`` would refuse it).
        if not self.running:
            self.start()
        return self


def signal_name(status: int | None) -> str:
    """An exit status as people read it: ``status 2``, ``SIGKILL``."""
    if status is None:
        return "running"
    if status < 0:
        try:
            return signal.Signals(-status).name
        except ValueError:
            return f"signal {-status}"
    return f"status {status}"

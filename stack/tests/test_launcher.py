"""The process launcher: ports, readiness, stopping, killing, restarting, dying with its parent.

A taken port stops a launch before anything starts, and a stranger's answer
is not readiness. (Before this, a launch beside a running stack polled the
port, got the other stack's 200 and reported ready, while its own child died
on "address already in use".)
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

import pytest
from ds_stack import components, ports
from ds_stack.launcher import LaunchError, PortInUse, Process, ProcessSpec, free_port

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

SLEEPER = (sys.executable, "-c", "import time; time.sleep(600)")
# Serves 200 on its port until SIGTERM, which it takes 0.2 s to honour.
SERVE = textwrap.dedent(
    """
    import http.server, signal, sys, time
    class Ok(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
        def log_message(self, *args): pass
    server = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Ok)
    def term(*_):
        time.sleep(0.2); print("stopping", flush=True); sys.exit(0)
    signal.signal(signal.SIGTERM, term)
    print("serving", flush=True)
    server.serve_forever()
    """
)


class _AlwaysOk(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def stranger() -> Iterator[int]:
    """A port on which this test process answers 200 to everything."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _AlwaysOk)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _serving(port: int, log: Path, **changes: object) -> ProcessSpec:
    spec = ProcessSpec(
        name="served",
        argv=(sys.executable, "-c", SERVE, str(port)),
        ready_url=f"http://127.0.0.1:{port}/",
        log_path=log,
    )
    return spec if not changes else _replace(spec, **changes)


def _replace(spec: ProcessSpec, **changes: object) -> ProcessSpec:
    import dataclasses

    return dataclasses.replace(spec, **changes)  # type: ignore[arg-type]


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # A zombie still answers kill(0): look at its state.
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split(") ", 1)[1].startswith("Z")


def test_a_taken_port_stops_the_launch_before_anything_starts() -> None:
    with socket.create_server(("127.0.0.1", 0)) as holder:
        port = holder.getsockname()[1]
        child = Process(components.ds_server(port, env={"DS_STORAGE__MODE": "memory"}))
        with pytest.raises(PortInUse) as refused:
            child.start()
    assert refused.value.port == port
    me = os.getpid()
    assert str(refused.value) == (
        f"port {port} is already in use by pid {me} ({ports.command_line(me)})"
    )
    assert child.pid is None  # nothing was started


def test_envoy_needs_its_listener_port_free(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as holder:
        taken = holder.getsockname()[1]
        gateway = Process(
            components.gateway(
                listen_port=taken,
                upstream_ports=[free_port()],
                admin_port=free_port(),
                config_path=tmp_path / "envoy.yaml",
            )
        )
        with pytest.raises(PortInUse, match=f"^port {taken} is already in use"):
            gateway.start()
    assert gateway.pid is None


def test_a_strangers_answer_is_not_the_childs_readiness(stranger: int) -> None:
    # As if the stranger took the port after the free-port check: skip that check.
    child = Process(
        ProcessSpec("sleeper", SLEEPER, ready_url=f"http://127.0.0.1:{stranger}/healthz", ports=())
    )
    with pytest.raises(LaunchError) as refused:
        child.start()
    assert str(refused.value).startswith(
        f"port {stranger} answered for sleeper, but from pid {os.getpid()} "
    )
    assert "not from the sleeper just started (pid " in str(refused.value)
    assert not child.running  # and the child was stopped


def test_a_child_that_dies_says_how() -> None:
    child = Process(
        ProcessSpec(
            "quitter",
            (sys.executable, "-c", "raise SystemExit(7)"),
            ready_url=f"http://127.0.0.1:{free_port()}/healthz",
        )
    )
    with pytest.raises(LaunchError, match=r"^quitter exited early \(status 7\)$"):
        child.start()


def test_a_child_that_dies_shows_the_end_of_its_log(tmp_path: Path) -> None:
    log = tmp_path / "quitter.log"
    child = Process(
        ProcessSpec(
            "quitter",
            (sys.executable, "-c", "import sys; print('bad setting: X'); sys.exit(2)"),
            ready_url=f"http://127.0.0.1:{free_port()}/healthz",
            log_path=log,
        )
    )
    with pytest.raises(LaunchError) as failed:
        child.start()
    assert str(failed.value) == f"quitter exited early (status 2); see {log}:\n    bad setting: X"


def test_stop_asks_first_and_returns_the_exit_status(tmp_path: Path) -> None:
    log = tmp_path / "served.log"
    child = Process(_serving(free_port(), log))
    child.start()
    assert child.ready_secs is not None
    assert child.stop() == 0
    assert log.read_text().splitlines() == ["serving", "stopping"]


def test_stop_kills_what_ignores_it(tmp_path: Path) -> None:
    stubborn = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); " + (
        "print('up', flush=True); time.sleep(600)"
    )
    child = Process(
        ProcessSpec(
            "stubborn",
            (sys.executable, "-c", stubborn),
            ready_log="up",
            log_path=tmp_path / "stubborn.log",
            stop_timeout_secs=0.5,
        )
    )
    child.start()
    assert child.stop() == -signal.SIGKILL


def test_kill_and_restart_on_the_same_port(tmp_path: Path) -> None:
    port = free_port()
    child = Process(_serving(port, tmp_path / "served.log"))
    child.start()
    first = child.pid
    assert first is not None
    child.kill()
    assert _gone(first)
    assert not child.running
    child.start()
    second = child.pid
    assert second not in (None, first)
    assert ports.holders(port) == [second]
    child.restart()
    assert child.pid not in (None, second)
    child.stop()


def test_readiness_by_log_counts_only_this_start(tmp_path: Path) -> None:
    log = tmp_path / "logged.log"
    log.write_text("ready\n")  # an earlier run's
    script = "import time; time.sleep(0.5); print('ready', flush=True); time.sleep(600)"
    child = Process(
        ProcessSpec("logged", (sys.executable, "-c", script), ready_log="ready", log_path=log)
    )
    started = time.monotonic()
    child.start()
    assert time.monotonic() - started >= 0.5
    assert log.read_text() == "ready\nready\n"
    child.stop()


_LAUNCH_AND_WAIT = """
import sys, time
from ds_stack.launcher import Process, ProcessSpec
child = Process(ProcessSpec("sleeper", ("sleep", "600")))
child.start()
print(child.pid, flush=True)
time.sleep(600)
"""


def test_children_die_with_a_launcher_killed_by_sigkill() -> None:
    launcher = subprocess.Popen(
        [sys.executable, "-c", _LAUNCH_AND_WAIT], stdout=subprocess.PIPE, text=True
    )
    assert launcher.stdout is not None
    with launcher.stdout:
        child = int(launcher.stdout.readline())
    launcher.kill()
    launcher.wait()
    deadline = time.monotonic() + 10
    while not _gone(child):
        assert time.monotonic() < deadline, f"pid {child} outlived its launcher"
        time.sleep(0.05)

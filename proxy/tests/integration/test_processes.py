"""The process launcher: a taken port stops it, and a stranger's answer is not readiness.

Before this, a launch beside a running stack polled the port, got the other
stack's 200 and reported ready, while its own child died on "address
already in use".
"""

from __future__ import annotations

import os
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

import pytest
from ds_proxy import envoy_config as ec
from ds_proxy import ports, processes
from ds_proxy.paths import DEV_CONFIG

if TYPE_CHECKING:
    from collections.abc import Iterator

SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)"]


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


def test_a_taken_port_stops_the_launch_before_anything_starts() -> None:
    with socket.create_server(("127.0.0.1", 0)) as holder:
        port = holder.getsockname()[1]
        child = processes.ds_server(port, env={"DS_STORAGE__MODE": "memory"})
        with pytest.raises(ports.PortInUse) as refused:
            child.start()
    assert refused.value.port == port
    me = os.getpid()
    assert str(refused.value) == (
        f"port {port} is already in use by pid {me} ({ports.command_line(me)})"
    )
    assert child.pid is None  # nothing was started


def test_envoy_needs_its_listener_port_free() -> None:
    with socket.create_server(("127.0.0.1", 0)) as holder:
        taken = holder.getsockname()[1]
        config = ec.localize(
            ec.load(DEV_CONFIG),
            listen_port=taken,
            upstream_port=processes.free_port(),
            admin_port=processes.free_port(),
        )
        gateway = processes.envoy(config, admin_port=processes.free_port())
        try:
            with pytest.raises(ports.PortInUse, match=f"^port {taken} is already in use"):
                gateway.start()
        finally:
            gateway.stop()
    assert gateway.pid is None


def test_a_strangers_answer_is_not_the_childs_readiness(stranger: int) -> None:
    # As if the stranger took the port after the free-port check: skip that check.
    child = processes.ChildProcess(
        "sleeper", SLEEPER, dict(os.environ), f"http://127.0.0.1:{stranger}/healthz", ports=()
    )
    with pytest.raises(processes.LaunchError) as refused:
        child.start()
    assert str(refused.value).startswith(
        f"port {stranger} answered for sleeper, but from pid {os.getpid()} "
    )
    assert "not from the sleeper just started (pid " in str(refused.value)
    assert child.pid is None  # and the child was stopped


def test_a_child_that_dies_says_how() -> None:
    child = processes.ChildProcess(
        "quitter",
        [sys.executable, "-c", "raise SystemExit(7)"],
        dict(os.environ),
        f"http://127.0.0.1:{processes.free_port()}/healthz",
    )
    with pytest.raises(processes.LaunchError, match=r"^quitter exited early \(status 7\)$"):
        child.start()

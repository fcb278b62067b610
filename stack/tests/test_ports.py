"""Who holds a port, read from /proc: the launcher's defence against strangers."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

from ds_stack import ports


def test_a_listening_socket_is_found_with_its_holder() -> None:
    with socket.create_server(("127.0.0.1", 0)) as holder:
        port = holder.getsockname()[1]
        assert not ports.is_free(port)
        assert ports.holders(port) == [os.getpid()]
        me = os.getpid()
        assert ports.describe_holders(port) == f"pid {me} ({ports.command_line(me)})"
        assert ports.listened_by(port, os.getpid()) is True
    assert ports.is_free(port)
    assert ports.holders(port) == []
    assert ports.describe_holders(port) is None


def test_a_process_that_does_not_hold_the_socket_is_not_its_listener() -> None:
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        with socket.create_server(("127.0.0.1", 0)) as holder:
            port = holder.getsockname()[1]
            assert ports.listened_by(port, other.pid) is False
    finally:
        other.kill()
        other.wait()


def test_a_descendant_holding_the_socket_counts() -> None:
    # A wrapper command (a shell, `uv run`) whose child is the server.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    script = (
        "import socket, sys, time\n"
        f"s = socket.create_server(('127.0.0.1', {port}))\n"
        "print('listening', flush=True)\n"
        "time.sleep(600)\n"
    )
    # "; exit" keeps the shell from exec'ing: the server is its child.
    wrapper = subprocess.Popen(
        ["/bin/sh", "-c", f'"{sys.executable}" -c "$0"; exit', script],
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        assert wrapper.stdout is not None
        assert wrapper.stdout.readline() == b"listening\n"
        [server] = ports.holders(port)
        assert server != wrapper.pid  # the shell's child holds it, not the shell
        assert ports.listened_by(port, wrapper.pid) is True
    finally:
        os.killpg(wrapper.pid, signal.SIGKILL)  # the shell and its child
        wrapper.wait()
        wrapper.stdout.close()

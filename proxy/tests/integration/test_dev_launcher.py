"""``make dev``'s launcher: ds-server on loopback behind Envoy; SIGINT stops both."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
from ds_proxy import ports
from ds_proxy.processes import free_port
from ds_proxy.tokens import bucket_token
from gateway_stack import bearer

if TYPE_CHECKING:
    from collections.abc import Iterator


def _listening_addresses(port: int) -> set[str]:
    """Local IPv4 addresses with a listening TCP socket on ``port`` (from /proc/net/tcp)."""
    addresses = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, state = fields[1], fields[3]
        host_hex, port_hex = local.split(":")
        if state == "0A" and int(port_hex, 16) == port:  # 0A: LISTEN
            octets = bytes.fromhex(host_hex)[::-1]
            addresses.add(".".join(str(b) for b in octets))
    return addresses


def _dev_argv(listen: int, server: int, admin: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "ds_proxy.dev",
        *("--listen-port", str(listen)),
        *("--server-port", str(server)),
        *("--admin-port", str(admin)),
        *("--server-log-level", "warning"),
    ]


def _dev_env(data_dir: Path) -> dict[str, str]:
    # The default ./data/streams may hold streams of an earlier `make dev`.
    return {**os.environ, "DS_STORAGE__DATA_DIR": str(data_dir)}


@contextlib.contextmanager
def _running_dev_stack(tmp_path: Path, listen: int, server: int, admin: int) -> Iterator[None]:
    """A dev stack serving through Envoy; on exit, Ctrl-C it and check it stopped cleanly."""
    log_path = tmp_path / "dev.log"
    log = log_path.open("wb")
    launcher = subprocess.Popen(
        _dev_argv(listen, server, admin),
        stdout=log,
        stderr=subprocess.STDOUT,
        env=_dev_env(tmp_path / "data"),
    )
    base = f"http://127.0.0.1:{listen}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert launcher.poll() is None, log_path.read_text()
            try:
                if httpx.get(f"{base}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "dev stack not ready"
            time.sleep(0.1)
        yield
    finally:
        launcher.send_signal(signal.SIGINT)
        try:
            code = launcher.wait(timeout=30)
        finally:
            if launcher.poll() is None:
                launcher.kill()
                launcher.wait()
            log.close()
    assert code == 0, log_path.read_text()


def test_dev_stack_serves_through_envoy_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    listen, server, admin = free_port(), free_port(), free_port()
    base = f"http://127.0.0.1:{listen}"
    with _running_dev_stack(tmp_path, listen, server, admin):
        token = bucket_token("dev", read=("chat",), write=("chat",))
        headers = {**bearer(token), "Content-Type": "text/plain"}
        assert httpx.put(f"{base}/v1/stream/chat/room", headers=headers).status_code == 201
        assert httpx.put(f"{base}/v1/stream/chat/room2").status_code == 401
        # Gateway authorization is on in the dev stack.
        assert httpx.put(f"{base}/v1/stream/other/room", headers=headers).status_code == 403
        # ds-server listens on loopback only.
        assert _listening_addresses(server) == {"127.0.0.1"}
        # The viewer, and the token the dev stack offers it: every bucket, from Envoy.
        assert httpx.get(f"{base}/ui/").status_code == 200
        offered = httpx.get(f"{base}/ui/dev-token.json")
        assert offered.status_code == 200
        assert offered.headers["content-type"] == "application/json"
        assert offered.headers["cache-control"] == "no-store"
        dev = bearer(offered.json()["token"])
        assert offered.json()["sub"] == "dev"
        assert offered.json()["expires_at"] > time.time() + 3600
        assert httpx.put(f"{base}/ds/anybucket", headers=dev).status_code == 201
        assert httpx.post(f"{base}/ui/dev-token.json").status_code == 401
    # Both children are gone: nothing answers on either port.
    for port in (listen, server):
        try:
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1.0)
        except httpx.TransportError:
            continue
        raise AssertionError(f"port {port} still answers after Ctrl-C")


def test_a_second_dev_stack_says_the_first_is_running(tmp_path: Path) -> None:
    listen, server, admin = free_port(), free_port(), free_port()
    with _running_dev_stack(tmp_path, listen, server, admin):
        gateway_pid = ports.holders(listen)
        # The same ports: refused before anything starts, naming the port and its holder.
        same_ports = subprocess.run(
            _dev_argv(listen, server, admin),
            env=_dev_env(tmp_path / "data"),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert same_ports.returncode == 1
        assert same_ports.stdout == ""  # no "ready" banner
        assert same_ports.stderr.startswith(
            f"ds-dev: port {listen} is already in use by pid {gateway_pid[0]} ("
        )
        assert "is another `make dev` running?" in same_ports.stderr
        assert same_ports.stderr.count("\n") == 1

        # Other ports, the same data directory: its ds-server refuses to share it.
        other_ports = subprocess.run(
            _dev_argv(free_port(), free_port(), free_port()),
            env=_dev_env(tmp_path / "data"),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert other_ports.returncode == 1
        assert other_ports.stdout == ""
        first_server = ports.holders(server)[0]
        assert other_ports.stderr.splitlines() == [
            f"ds-server: error: DS_STORAGE__DATA_DIR={str(tmp_path / 'data')!r}: "
            f"{tmp_path / 'data'} is in use by another ds-server (pid {first_server})",
            "ds-dev: ds-server exited early (status 2)",
        ]

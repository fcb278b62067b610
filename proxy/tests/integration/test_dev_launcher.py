"""``make dev``'s launcher: ds-server on loopback behind Envoy; SIGINT stops both."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
from ds_proxy.processes import free_port
from ds_proxy.tokens import bucket_token
from gateway_stack import bearer


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


def test_dev_stack_serves_through_envoy_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    listen, server, admin = free_port(), free_port(), free_port()
    log = (tmp_path / "dev.log").open("wb")
    launcher = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ds_proxy.dev",
            *("--listen-port", str(listen)),
            *("--server-port", str(server)),
            *("--admin-port", str(admin)),
            *("--server-log-level", "warning"),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        # The default ./data/streams may hold streams of an earlier `make dev`.
        env={**os.environ, "DS_STORAGE__DATA_DIR": str(tmp_path / "data")},
    )
    base = f"http://127.0.0.1:{listen}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert launcher.poll() is None, (tmp_path / "dev.log").read_text()
            try:
                if httpx.get(f"{base}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "dev stack not ready"
            time.sleep(0.1)
        token = bucket_token("dev", read=("chat",), write=("chat",))
        headers = {**bearer(token), "Content-Type": "text/plain"}
        assert httpx.put(f"{base}/v1/stream/chat/room", headers=headers).status_code == 201
        assert httpx.put(f"{base}/v1/stream/chat/room2").status_code == 401
        # Gateway authorization is on in the dev stack.
        assert httpx.put(f"{base}/v1/stream/other/room", headers=headers).status_code == 403
        # ds-server listens on loopback only.
        assert _listening_addresses(server) == {"127.0.0.1"}
    finally:
        launcher.send_signal(signal.SIGINT)
        try:
            code = launcher.wait(timeout=30)
        finally:
            if launcher.poll() is None:
                launcher.kill()
                launcher.wait()
            log.close()
    assert code == 0
    # Both children are gone: nothing answers on either port.
    for port in (listen, server):
        try:
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1.0)
        except httpx.TransportError:
            continue
        raise AssertionError(f"port {port} still answers after Ctrl-C")

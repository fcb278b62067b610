"""Instructions a whole ds-server spends per request, counted by callgrind.

Wall-clock and CPU figures on a shared machine move with everyone else's
load; instruction counts do not. The server runs under ``valgrind
--tool=callgrind``; after a warm-up the counters are zeroed, N requests go
over one keep-alive connection from a plain socket, the counters are dumped,
and the total is divided by N (docs/development.md, "Performance habits").
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from ds_proxy.tokens import TokenSpec
from ds_stack.ports import free_port

POST = (
    b"POST /v1/stream/counted HTTP/1.1\r\nHost: probe\r\n"
    b"Content-Type: application/octet-stream\r\nContent-Length: 100\r\n\r\n" + b"x" * 100
)
# A token's payload as the gateway forwards it (base64url, unpadded), of a
# fixed token: every request and every count alike.
FORWARDED_PAYLOAD = base64.urlsafe_b64encode(
    json.dumps(TokenSpec(sub="ds-bench").claims(now=1_800_000_000)).encode()
).rstrip(b"=")
# The same POST as wrk sends it through Envoy, as Envoy forwards it (captured
# from the committed dev config): its token verified and removed, the
# verified payload, a request id and the forwarding headers added.
FORWARDED_POST = (
    b"POST /v1/stream/counted HTTP/1.1\r\nhost: 127.0.0.1:8080\r\n"
    b"content-type: application/octet-stream\r\ncontent-length: 100\r\n"
    b"x-forwarded-for: 127.0.0.1\r\nx-forwarded-proto: http\r\n"
    b"x-envoy-external-address: 127.0.0.1\r\n"
    b"x-request-id: 72565d26-0135-4ce7-aaef-69403341261d\r\n"
    b"x-jwt-payload: " + FORWARDED_PAYLOAD + b"\r\n\r\n" + b"x" * 100
)
_START_SECS = 600.0  # Python's start-up under valgrind is slow, more so on a busy machine


def _send(conn: socket.socket, count: int, request: bytes) -> None:
    """``count`` POSTs, one at a time, each answered before the next."""
    for _ in range(count):
        conn.sendall(request)
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = conn.recv(65536)
            if not chunk:
                raise RuntimeError("the server closed the connection")
            answer += chunk
        if not answer.startswith(b"HTTP/1.1 204"):
            raise RuntimeError(f"unexpected answer: {answer[:80]!r}")


def per_request(
    env: dict[str, str],
    requests: int = 2000,
    warmup: int = 500,
    keep: Path | None = None,
    *,
    argv: tuple[str, ...] = ("--log-level", "warning"),
    base_env: dict[str, str] | None = None,
    settle_secs: float = 0.0,
    request: bytes = POST,
) -> float:
    """Instructions per 100-byte POST of a memory-mode ds-server with ``env`` added.

    ``argv``: ds-server's flags; ``base_env``: its environment before
    ``env`` (this process's by default). ``settle_secs``: wait this long
    before zeroing the counters and before reading them, so that work the
    server defers (the request log's batches) is counted for the requests
    counted, and only for them. ``keep``: copy callgrind's dump there (for
    ``callgrind_annotate``). ``request``: the POST sent, every time (to
    ``/v1/stream/counted``, answered 204).
    """
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="ds-bench-callgrind-") as scratch:
        out = Path(scratch) / "callgrind.out"
        server_env = {
            **(os.environ if base_env is None else base_env),
            "DS_SERVER__HOST": "127.0.0.1",
            "DS_SERVER__PORT": str(port),
            "DS_STORAGE__MODE": "memory",
            "DS_METRICS__PORT": "0",
            **env,
        }
        command = [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={out}",
            sys.executable,
            "-m",
            "ds_server",
            *argv,
        ]
        server = subprocess.Popen(
            command, env=server_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            url = f"http://127.0.0.1:{port}"
            _await_ready(server, url)
            put = httpx.put(
                f"{url}/v1/stream/counted",
                # The identity too, which a server in gateway mode requires.
                headers={
                    "Content-Type": "application/octet-stream",
                    "X-JWT-Payload": FORWARDED_PAYLOAD.decode(),
                },
                timeout=60,
            )
            put.raise_for_status()
            with socket.create_connection(("127.0.0.1", port), timeout=120) as conn:
                _send(conn, warmup, request)
                time.sleep(settle_secs)
                _control("-z", server.pid)
                _send(conn, requests, request)
                time.sleep(settle_secs)
                _control("-d", server.pid)
            total = _total(out, keep)
        finally:
            server.kill()
            server.wait()
    return total / requests


def _await_ready(server: subprocess.Popen[bytes], url: str) -> None:
    deadline = time.monotonic() + _START_SECS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError("ds-server under callgrind exited during start-up")
        try:
            if httpx.get(f"{url}/healthz", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    raise RuntimeError("ds-server under callgrind did not become ready")


def _control(flag: str, pid: int) -> None:
    subprocess.run(["callgrind_control", flag, str(pid)], check=True, capture_output=True)


def _total(out: Path, keep: Path | None = None) -> float:
    """The instruction total of the dump ``callgrind_control -d`` wrote (``out.N``)."""
    dumps = sorted(out.parent.glob(out.name + ".*"), key=lambda p: p.stat().st_mtime)
    if not dumps:
        raise RuntimeError("callgrind wrote no dump")
    if keep is not None:
        shutil.copyfile(dumps[-1], keep)
    text = dumps[-1].read_text(errors="replace")
    found = re.search(r"^(?:summary|totals): (\d+)", text, re.MULTILINE)
    if found is None:
        raise RuntimeError(f"no total in {dumps[-1].name}")
    return float(found.group(1))

"""The example app as a real process, in front of a real Envoy and ds-server."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest
from ds_stack.ports import free_port

# The gateway tests' stack: the same launcher, config and test-only key.
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "proxy" / "tests"))
# The example is no workspace member: it runs from its sources (as `make example-chat` runs it).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from gateway_stack import ADMIN, GatewayStack

SOURCES = Path(__file__).resolve().parents[1] / "src"

if TYPE_CHECKING:
    from collections.abc import Iterator

READY_SECS = 60.0


@dataclass(frozen=True)
class ChatApp:
    url: str
    gateway: GatewayStack
    hold_file: Path


@pytest.fixture(scope="module")
def chat_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChatApp]:
    state = tmp_path_factory.mktemp("chat-example")
    gateway = GatewayStack(tmp_path_factory.mktemp("gateway"))
    gateway.start()
    app: subprocess.Popen[bytes] | None = None
    log = (state / "chat-example.log").open("wb")
    try:
        with httpx.Client(
            base_url=gateway.url, headers={"Authorization": f"Bearer {ADMIN}"}
        ) as http:
            assert http.put("/ds/sessions").status_code == 201  # what `make dev` creates
        port = free_port()
        hold = state / "hold"
        env = {
            **os.environ,
            "DS_GATEWAY_URL": gateway.url,
            "DS_TOKEN": ADMIN,
            "CHAT_EXAMPLE_PAUSE_MS": "20",
            "CHAT_EXAMPLE_HOLD_FILE": str(hold),
            "PYTHONPATH": os.pathsep.join(
                filter(None, [str(SOURCES), os.environ.get("PYTHONPATH")])
            ),
        }
        app = subprocess.Popen(
            [sys.executable, "-m", "chat_example", "--port", str(port)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        _wait_ready(url, app)
        yield ChatApp(url, gateway, hold)
    finally:
        if app is not None:
            app.terminate()
            app.wait(timeout=30)
        log.close()
        gateway.stop()


def _wait_ready(url: str, app: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + READY_SECS
    while time.monotonic() < deadline:
        assert app.poll() is None, "the example app exited"
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError("the example app did not answer /healthz")

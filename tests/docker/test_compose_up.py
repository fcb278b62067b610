"""docker-compose.yml brought up for real (Docker only): Envoy's /healthz, then a message
through the gateway with a token and back. tests/deploy/test_compose_file.py checks the file
without an engine; this runs it. It uses the file's fixed ports (8080, 54321, ...)."""

from __future__ import annotations

import subprocess
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]
GATEWAY = "http://127.0.0.1:8080"


def compose(project: str, *args: str, timeout: float = 1800) -> str:
    command = ["docker-compose", "-f", str(ROOT / "docker-compose.yml"), "-p", project]
    done = subprocess.run(
        [*command, "--profile", "sync", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, f"docker-compose {' '.join(args)}:\n{done.stderr}"
    return done.stdout


@pytest.fixture
def stack(docker_engine: None) -> Iterator[str]:
    project = "ds" + uuid.uuid4().hex[:8]
    try:
        compose(project, "up", "-d", "--build")
        yield project
    finally:
        compose(project, "down", "-v", "--remove-orphans", timeout=300)


def healthy(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.TransportError:
        return False


@pytest.mark.timeout(2400)
def test_the_compose_stack_serves_a_round_trip(stack: str) -> None:
    deadline = time.monotonic() + 180
    while not healthy(f"{GATEWAY}/healthz"):
        assert time.monotonic() < deadline, "Envoy's /healthz never answered 200"
        time.sleep(1)
    bucket = "compose-" + uuid.uuid4().hex[:8]
    token = compose(stack, "exec", "-T", "envoy", "ds-token", "--sub", "t", "--bucket", bucket)
    headers = {"Authorization": f"Bearer {token.strip()}"}
    with httpx.Client(base_url=GATEWAY, headers=headers, timeout=30) as http:
        assert http.put(f"/ds/{bucket}").status_code in (200, 201)
        stream = f"/ds/{bucket}/round-trip"
        created = http.put(stream, headers={"Content-Type": "application/json"})
        assert created.status_code in (200, 201), created.text
        appended = http.post(stream, json={"hello": "compose"})
        assert appended.status_code in (200, 204), appended.text
        read = http.get(stream, params={"offset": "-1"})
        assert read.status_code == 200, read.text
        assert read.json() == [{"hello": "compose"}]

"""ds-token-service keeps short-lived tokens fresh, and a service reading its file never stops.

A real ds-token-service renews 4-second tokens every 2 seconds; a real
heartbeat reads its file and appends through a real Envoy (one second of
clock skew) for several token lifetimes: not one tick is refused.
"""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import datetime
from typing import TYPE_CHECKING

import httpx
import psycopg
from ds_proxy.token_service import expiry
from ds_stack import components
from ds_stack.launcher import Process, ProcessSpec
from token_files import SKEW_SECS, strict_gateway

if TYPE_CHECKING:
    from pathlib import Path

TTL_SECS = 4
RUN_SECS = 3 * TTL_SECS
GRANTS = ["heartbeat:heartbeat:session-events", "other:someone:chat"]


def _service_argv(directory: Path, *extra: str) -> list[str]:
    grants = [arg for grant in GRANTS for arg in ("--token", grant)]
    return [
        sys.executable,
        "-m",
        "ds_proxy.token_service",
        *("--dir", str(directory), "--ttl", str(TTL_SECS)),
        *grants,
        *extra,
    ]


def test_renewed_tokens_keep_a_service_running_for_many_lifetimes(
    tmp_path: Path, postgres_db: str
) -> None:
    with psycopg.connect(postgres_db, autocommit=True) as db:
        db.execute("CREATE TABLE items (id bigserial PRIMARY KEY, title text, body text)")
    directory = tmp_path / "tokens"
    service = Process(
        ProcessSpec(
            name="tokens",
            argv=tuple(_service_argv(directory)),
            ready_log="renewed 2 tokens",
            log_path=tmp_path / "tokens.log",
        )
    )
    heartbeat_log = tmp_path / "heartbeat.log"
    with strict_gateway(tmp_path / "gateway") as gateway:
        service.start()
        heartbeat = Process(
            components.heartbeat(
                server_url=gateway.url,
                postgres_url=postgres_db,
                token=None,
                token_file=directory / "heartbeat",
                interval_secs=0.25,
                log_path=heartbeat_log,
            )
        )
        try:
            heartbeat.start()
            seen: set[int] = set()
            ends = time.monotonic() + RUN_SECS
            while time.monotonic() < ends:
                exp = expiry((directory / "heartbeat").read_text())
                assert exp is not None
                seen.add(exp)
                check = [sys.executable, "-m", "ds_proxy.token_service", "--dir", str(directory)]
                assert subprocess.run([*check, "--check"]).returncode == 0
                time.sleep(0.5)
        finally:
            heartbeat.stop()
        token = (directory / "heartbeat").read_text().strip()
        response = httpx.get(
            f"{gateway.url}/v1/stream/session-events",
            params={"offset": "-1"},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert response.status_code == 200, response.text
        status = service.stop()
    log = heartbeat_log.read_text(encoding="utf-8")
    # Every token lived 4 s and was replaced after 2: the run outlived several.
    assert len(seen) >= RUN_SECS // (TTL_SECS // 2) - 1, sorted(seen)
    assert "failed" not in log, log
    first_refused = min(seen) + SKEW_SECS + 1
    stamps = [_epoch(event["headers"]["timestamp"]) for event in response.json()]
    assert any(stamp > first_refused for stamp in stamps), "nothing after the first token's end"
    assert status == 0, (tmp_path / "tokens.log").read_text()


def _epoch(rfc3339: str) -> float:
    return datetime.fromisoformat(rfc3339).timestamp()

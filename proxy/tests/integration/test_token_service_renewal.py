"""ds-token-service keeps short-lived tokens fresh, and a service reading its file never stops.

A real ds-token-service renews 4-second tokens every 2 seconds; a real
heartbeat reads its file and appends through a real Envoy (one second of
clock skew) for several token lifetimes: not one tick is refused.
"""

from __future__ import annotations

import subprocess
import sys
import time
from typing import TYPE_CHECKING

from ds_proxy.token_service import expiry
from ds_stack.launcher import Process, ProcessSpec
from token_files import SKEW_SECS, event_times, heartbeat_reading, strict_gateway

if TYPE_CHECKING:
    from pathlib import Path

TTL_SECS = 4
# The run lasts until this many tokens were seen in the file (three lifetimes at least), with
# a deadline that only a stalled renewal meets on a loaded machine.
TOKENS_TO_SEE = 5
DEADLINE_SECS = 20 * TTL_SECS
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
    check = [sys.executable, "-m", "ds_proxy.token_service", "--dir", str(directory), "--check"]
    with strict_gateway(tmp_path / "gateway") as gateway:
        service.start()
        heartbeat = heartbeat_reading(
            directory / "heartbeat",
            gateway_url=gateway.url,
            postgres_url=postgres_db,
            log_path=heartbeat_log,
            interval_secs=0.25,
        )
        try:
            heartbeat.start()
            seen: set[int] = set()
            ends = time.monotonic() + DEADLINE_SECS
            while len(seen) < TOKENS_TO_SEE and time.monotonic() < ends:
                exp = expiry((directory / "heartbeat").read_text())
                assert exp is not None
                seen.add(exp)
                assert subprocess.run(check).returncode == 0
                time.sleep(0.5)
        finally:
            heartbeat.stop()
        token = (directory / "heartbeat").read_text().strip()
        times = event_times(gateway.url, token, "session-events")
        status = service.stop()
        # What the gateway saw, to tell a refusal from a slow answer should a tick fail.
        answers = [line for line in gateway.access_log_lines() if '"method":"POST"' in line]
    log = heartbeat_log.read_text(encoding="utf-8")
    # Every token lived 4 s and was replaced after 2: the run outlived several.
    assert len(seen) >= TOKENS_TO_SEE, sorted(seen)
    renewals = (tmp_path / "tokens.log").read_text()
    assert "failed" not in log, "\n".join([log, "Envoy's POSTs:", *answers, "renewals:", renewals])
    first_refused = min(seen) + SKEW_SECS + 1
    assert any(when > first_refused for when in times), "nothing after the first token's end"
    assert status == 0, (tmp_path / "tokens.log").read_text()

"""The heartbeat reads its token from a file that is renewed while it runs (a real process).

Through a real Envoy that allows one second of clock skew: the first token
expires a few seconds in, after the file has been given a new one; the
heartbeat's appends go on past that moment, with not one refused.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "proxy" / "tests"))
from token_files import event_times, heartbeat_reading, issue, refused, strict_gateway, wait_past

STREAM = "session-events"
TICK_SECS = 0.3


def appended_after(log: Path, start: int) -> list[str]:
    lines = log.read_text(encoding="utf-8")[start:].splitlines()
    return [line for line in lines if "appended to" in line]


def test_the_heartbeat_goes_on_past_its_first_tokens_expiry(
    tmp_path: Path, postgres_db: str
) -> None:
    token_file = tmp_path / "heartbeat.token"
    first, first_exp = issue(token_file, "heartbeat", 8, (STREAM,))
    log = tmp_path / "heartbeat.log"
    with strict_gateway(tmp_path / "gateway") as gateway:
        heartbeat = heartbeat_reading(
            token_file,
            gateway_url=gateway.url,
            postgres_url=postgres_db,
            log_path=log,
            interval_secs=TICK_SECS,
        )
        heartbeat.start()
        try:
            # The token service renews the file well before the token expires.
            second, _ = issue(token_file, "heartbeat", 600, (STREAM,))
            renewed_at = log.stat().st_size
            wait_past(first_exp)
            assert refused(gateway.url, first), "the first token should be refused by now"
            expired_at = log.stat().st_size
            deadline = time.monotonic() + 30
            while len(appended_after(log, expired_at)) < 3:
                assert heartbeat.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(TICK_SECS)
        finally:
            heartbeat.stop()
        after = log.read_text(encoding="utf-8")[renewed_at:]
        assert "failed" not in after, after
        times = event_times(gateway.url, second, STREAM)
    assert any(when > first_exp for when in times), "nothing appended after the first token's end"

"""The heartbeat reads its token from a file that is renewed while it runs (a real process).

Through a real Envoy that allows no clock skew: the first token expires a
few seconds in, after the file has been given a new one; the heartbeat's
appends go on past that moment, with not one refused.
"""

from __future__ import annotations

import json
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import psycopg
from ds_stack import components
from ds_stack.launcher import Process

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "proxy" / "tests"))
from token_files import refused, short_lived, strict_gateway, wait_past, write_token

if TYPE_CHECKING:
    from typing import Any

STREAM = "session-events"
TICK_SECS = 0.3


def events(gateway_url: str, token: str) -> list[dict[str, Any]]:
    response = httpx.get(
        f"{gateway_url}/v1/stream/{STREAM}",
        params={"offset": "-1"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = json.loads(response.content)
    return found


def appended_after(log: Path, start: int) -> list[str]:
    lines = log.read_text(encoding="utf-8")[start:].splitlines()
    return [line for line in lines if "appended to" in line]


def test_the_heartbeat_goes_on_past_its_first_tokens_expiry(
    tmp_path: Path, postgres_db: str
) -> None:
    with psycopg.connect(postgres_db, autocommit=True) as db:
        db.execute("CREATE TABLE items (id bigserial PRIMARY KEY, title text, body text)")
    token_file = tmp_path / "heartbeat.token"
    first, first_exp = short_lived("heartbeat", 8, (STREAM,))
    write_token(token_file, first)
    log = tmp_path / "heartbeat.log"
    with strict_gateway(tmp_path / "gateway") as gateway:
        heartbeat = Process(
            components.heartbeat(
                server_url=gateway.url,
                postgres_url=postgres_db,
                token=None,
                token_file=token_file,
                interval_secs=TICK_SECS,
                log_path=log,
            )
        )
        heartbeat.start()
        try:
            # The token service renews the file well before the token expires.
            second, _ = short_lived("heartbeat", 600, (STREAM,))
            write_token(token_file, second)
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
        stamps = [event["headers"]["timestamp"] for event in events(gateway.url, second)]
    assert any(_epoch(stamp) > first_exp for stamp in stamps), (
        "no event was appended after the first token expired"
    )


def _epoch(rfc3339: str) -> float:
    return datetime.fromisoformat(rfc3339).timestamp()

"""ds-sync reads its token from a file that is renewed while it runs (real processes).

ds-sync reaches the server through a real Envoy that allows one second of
clock skew. Its first token expires a few seconds in, after the file has
been given a new one: from then on every new request (wake-stream
reconnects every second, readers that idle out and come back, a stream
that appears) must carry the renewed token, and the events still reach
``session_events``.
"""

from __future__ import annotations

import sys
import time
import uuid
from pathlib import Path

from sync_support import SyncProcess, count_events, wait_until

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "proxy" / "tests"))
from token_files import admin_client, issue, refused, strict_gateway, wait_past

EVENT = {"type": "message", "key": "msg:1", "operation": "set", "value": {"text": "hi"}}
JSON = {"Content-Type": "application/json"}
# Long enough for ds-sync to start and copy a row on a busy two-core machine.
FIRST_TOKEN_SECS = 25


def test_ds_sync_goes_on_past_its_first_tokens_expiry(tmp_path: Path, postgres_db: str) -> None:
    token_file = tmp_path / "ds-sync.token"
    bucket = "b" + uuid.uuid4().hex[:12]
    with strict_gateway(tmp_path / "gateway") as gateway, admin_client(gateway.url) as http:

        def append(stream: str, key: str) -> None:
            body = [{**EVENT, "key": key}]
            response = http.post(f"/v1/stream/{bucket}/{stream}", json=body)
            assert response.status_code in (200, 204), response.text

        assert http.put(f"/ds/{bucket}").status_code == 201
        assert http.put(f"/v1/stream/{bucket}/early", headers=JSON).status_code == 201
        append("early", "msg:1")
        # Issued once the gateway is up: on a loaded machine starting Envoy and
        # ds-server alone can take longer than a short token lives.
        first, first_exp = issue(token_file, "ds-sync", FIRST_TOKEN_SECS)
        env = {"DS_SYNC__TOKEN_FILE": str(token_file)}
        with SyncProcess(gateway.url, postgres_db, f"{bucket}/*", env=env) as sync:
            wait_until(
                lambda: count_events(postgres_db, f"{bucket}/early") == 1,
                timeout=first_exp - time.time() - 1,
                what=f"row 1, read with the first token\n{sync.log()}",
            )
            # The token service renews the file well before the token expires.
            issue(token_file, "ds-sync", 600)
            wait_past(first_exp)
            assert refused(gateway.url, first), "the first token should be refused by now"
            # A stream made now (found by a wake, read by a new request) and more on the old one.
            assert http.put(f"/v1/stream/{bucket}/late", headers=JSON).status_code == 201
            append("late", "msg:1")
            append("early", "msg:2")
            wait_until(
                lambda: (
                    count_events(postgres_db, f"{bucket}/late") == 1
                    and count_events(postgres_db, f"{bucket}/early") == 2
                ),
                timeout=30,
                what=f"the rows written after the first token expired\n{sync.log()}",
            )
            assert sync.ready()

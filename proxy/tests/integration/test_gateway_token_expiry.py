"""A live read ends when its token does, through Envoy, and resumes with a fresh token.

The server here keeps live reads open for a minute (SSE) or 30 s
(long-poll), so a read that ends after a few seconds was ended by its
token. Envoy accepts a token up to 30 s past ``exp`` (clock skew); the
server refuses a live read with an expired token at once (401), so the
client's next step is a fresh token, and resuming from the last offset it
got loses and repeats nothing.

What the tests measure is printed (``-s`` shows it): how long after ``exp``
each read ended. The assertions only bound it loosely (a busy machine's
timers run late); docs/security.md quotes the figures.
"""

from __future__ import annotations

import json
import threading
import time
from typing import TYPE_CHECKING

import httpx
import pytest
from ds_proxy.tokens import TokenSpec, bucket_token, mint
from gateway_stack import GatewayStack, bearer, running_gateway, unique
from httpx_sse import connect_sse

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

JSON = {"Content-Type": "application/json"}
TOKEN_SECS = 4
# Far longer than the token: only the token can end these reads early.
SERVER_ENV = {
    "DS_SERVER__SSE_RECONNECT_INTERVAL_SECS": "60",
    "DS_SERVER__LONG_POLL_TIMEOUT_SECS": "30",
}
# A read ending this long after exp would not have been ended by the token.
LATE_BOUND_SECS = 10.0


@pytest.fixture(scope="module")
def long_lived(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayStack]:
    with running_gateway(tmp_path_factory.mktemp("expiry"), server_env=SERVER_ENV) as gateway:
        yield gateway


def _short_token(bucket: str, valid_secs: int) -> tuple[str, int]:
    now = int(time.time())
    spec = TokenSpec(sub="reader", read=(bucket,), write=(bucket,), expires_in=valid_secs)
    return mint(spec, now=now), now + valid_secs


class _Writer:
    """Appends {"i": 0}, {"i": 1}, ... every 50 ms until stopped."""

    def __init__(self, url: str, path: str, token: str) -> None:
        self._url, self._path, self._token = url, path, token
        self._stop = threading.Event()
        self.written = 0
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with httpx.Client(base_url=self._url, timeout=10.0) as http:
            while not self._stop.wait(0.05):
                body = json.dumps({"i": self.written})
                response = http.post(
                    self._path, headers={**bearer(self._token), **JSON}, content=body
                )
                assert response.status_code == 204, response.text
                self.written += 1

    def __enter__(self) -> _Writer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


def _read_sse(
    http: httpx.Client,
    path: str,
    offset: str,
    token: str,
    received: list[int],
    *,
    until_up_to_date: bool = False,
) -> tuple[str, float]:
    """One SSE read until the server ends it (or it is up to date, if asked).

    Returns the last control offset, and when the read ended.
    """
    params = {"offset": offset, "live": "sse"}
    with connect_sse(http, "GET", path, params=params, headers=bearer(token)) as source:
        assert source.response.status_code == 200
        pending: list[int] = []
        for event in source.iter_sse():
            if event.event == "data":
                pending.extend(item["i"] for item in json.loads(event.data))
            elif event.event == "control":
                # Only what a control event confirms counts (ds_client does the same).
                received.extend(pending)
                pending.clear()
                control = json.loads(event.data)
                offset = control["streamNextOffset"]
                if until_up_to_date and control.get("upToDate"):
                    break
    return offset, time.time()


def test_an_sse_read_ends_at_its_tokens_exp_and_resumes_with_a_fresh_token(
    long_lived: GatewayStack, tmp_path: Path
) -> None:
    bucket = unique("exp")
    path = f"/v1/stream/{bucket}/room"
    writer_token = bucket_token("writer", read=(bucket,), write=(bucket,))
    received: list[int] = []
    with httpx.Client(base_url=long_lived.url, timeout=httpx.Timeout(10.0, read=90.0)) as http:
        assert http.put(path, headers={**bearer(writer_token), **JSON}).status_code == 201
        with _Writer(long_lived.url, path, writer_token) as writer:
            short, exp = _short_token(bucket, TOKEN_SECS)
            offset, ended = _read_sse(http, path, "-1", short, received)
            late = ended - exp
            print(f"\nSSE read ended {late:+.3f} s after its token's exp")
            assert -0.05 <= late < LATE_BOUND_SECS
            assert received, "the read delivered data before it ended"

            # The same token again: Envoy still accepts it (clock skew), the server doesn't.
            refused = http.get(
                path, params={"offset": offset, "live": "sse"}, headers=bearer(short)
            )
            assert refused.status_code == 401
            assert "expired" in refused.text
            assert refused.headers["www-authenticate"].startswith("Bearer")

            time.sleep(0.5)  # the writer goes on meanwhile
        # Resume from the saved offset with a fresh token, once the writer has stopped.
        fresh, _ = _short_token(bucket, 3600)
        _read_sse(http, path, offset, fresh, received, until_up_to_date=True)
        stored = http.get(path, params={"offset": "-1"}, headers=bearer(fresh)).json()
    # Everything written, once each, in order: no gap and no duplicate at the resume.
    assert [item["i"] for item in stored] == list(range(writer.written))
    assert received == list(range(writer.written))


def test_a_long_poll_ends_at_its_tokens_exp(long_lived: GatewayStack) -> None:
    bucket = unique("exp")
    path = f"/v1/stream/{bucket}/quiet"
    writer_token = bucket_token("writer", read=(bucket,), write=(bucket,))
    with httpx.Client(base_url=long_lived.url, timeout=httpx.Timeout(10.0, read=60.0)) as http:
        assert http.put(path, headers={**bearer(writer_token), **JSON}).status_code == 201
        short, exp = _short_token(bucket, TOKEN_SECS)
        polled = http.get(
            path, params={"offset": "now", "live": "long-poll"}, headers=bearer(short)
        )
        late = time.time() - exp
    print(f"\nlong-poll answered {late:+.3f} s after its token's exp")
    assert polled.status_code == 204
    assert -0.05 <= late < LATE_BOUND_SECS

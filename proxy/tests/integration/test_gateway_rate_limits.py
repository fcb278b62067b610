"""Limits per token subject through a real Envoy: request rates (Envoy) and live reads (server).

The stack here has small limits (``DS_PROXY__*`` for Envoy,
``DS_AUTH__MAX_LIVE_READS_PER_SUB`` for ds-server) so a few requests reach
them. What is asserted is who gets refused and where, never how fast.
"""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING

import httpx
import pytest
from ds_proxy.tokens import bucket_token
from gateway_stack import GatewayStack, bearer, running_gateway, tag, unique

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

BURST = 10
GATEWAY_ENV = {
    "DS_PROXY__APPENDS_PER_SEC": "2",
    "DS_PROXY__APPEND_BURST": str(BURST),
    "DS_PROXY__READS_PER_SEC": "2",
    "DS_PROXY__READ_BURST": str(BURST),
}
LIVE_CAP = 3
SERVER_ENV = {
    "DS_AUTH__MAX_LIVE_READS_PER_SUB": str(LIVE_CAP),
    # Live reads stay open for the test's length unless the test ends them.
    "DS_SERVER__SSE_RECONNECT_INTERVAL_SECS": "60",
    "DS_SERVER__LONG_POLL_TIMEOUT_SECS": "30",
}
TEXT = {"Content-Type": "text/plain"}
# Enough requests to pass any burst refilled meanwhile at 2 a second.
FLOOD = 3 * BURST


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayStack]:
    workdir = tmp_path_factory.mktemp("limits")
    with running_gateway(workdir, server_env=SERVER_ENV, gateway_env=GATEWAY_ENV) as gateway:
        yield gateway


@pytest.fixture
def http(limited: GatewayStack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=limited.url, timeout=30.0) as client:
        yield client


def _subject(bucket: str) -> str:
    """A token for a subject of its own (each test starts with full buckets)."""
    return bucket_token(unique("sub"), read=(bucket,), write=(bucket,))


def _stream(http: httpx.Client, bucket: str) -> str:
    path = f"/v1/stream/{bucket}/s"
    admin = bucket_token(unique("admin"), read=(bucket,), write=(bucket,))
    assert http.put(path, headers={**bearer(admin), **TEXT}).status_code == 201
    return path


def _until_refused(send: Callable[[], httpx.Response]) -> tuple[list[int], httpx.Response]:
    statuses: list[int] = []
    for _ in range(FLOOD):
        response = send()
        statuses.append(response.status_code)
        if response.status_code == 429:
            return statuses, response
    raise AssertionError(f"never refused: {statuses}")


def test_appends_past_a_subjects_burst_are_refused_by_envoy(
    limited: GatewayStack, http: httpx.Client
) -> None:
    bucket = unique("rate")
    path = _stream(http, bucket)
    alice, bob = _subject(bucket), _subject(bucket)

    def append() -> httpx.Response:
        return http.post(path, headers={**bearer(alice), **TEXT}, content=b"a")

    statuses, refused = _until_refused(append)
    # The burst first, then the refusal: nothing else in between.
    assert statuses[:BURST] == [204] * BURST
    assert set(statuses[:-1]) == {204}
    assert refused.headers["retry-after"] == "1"
    assert "subject" in refused.text
    # Refused in Envoy: the refused request never reached ds-server.
    probe_id, probe = tag()
    assert http.post(path, headers={**bearer(alice), **TEXT, **probe}).status_code == 429
    assert not limited.reached_server(probe_id)

    # Another subject's appends, and alice's reads, have buckets of their own.
    for _ in range(BURST):
        assert http.post(path, headers={**bearer(bob), **TEXT}, content=b"b").status_code == 204
    assert http.get(path, params={"offset": "-1"}, headers=bearer(alice)).status_code == 200
    # Only the accepted appends were stored.
    stored = http.get(path, params={"offset": "-1"}, headers=bearer(bob)).content
    assert stored == b"a" * (len(statuses) - 1) + b"b" * BURST


def test_reads_past_a_subjects_burst_are_refused_and_appends_still_pass(
    http: httpx.Client,
) -> None:
    bucket = unique("rate")
    path = _stream(http, bucket)
    carol = _subject(bucket)
    statuses, refused = _until_refused(
        lambda: http.get(path, params={"offset": "-1"}, headers=bearer(carol))
    )
    assert statuses[:BURST] == [200] * BURST
    assert refused.headers["retry-after"] == "1"
    assert http.head(path, headers=bearer(carol)).status_code == 429  # HEAD is a read too
    assert http.post(path, headers={**bearer(carol), **TEXT}, content=b"c").status_code == 204


def test_a_refused_subject_is_served_again_once_its_bucket_refills(http: httpx.Client) -> None:
    bucket = unique("rate")
    path = _stream(http, bucket)
    dave = _subject(bucket)
    _until_refused(lambda: http.get(path, params={"offset": "-1"}, headers=bearer(dave)))
    deadline = time.monotonic() + 30
    while http.get(path, params={"offset": "-1"}, headers=bearer(dave)).status_code == 429:
        assert time.monotonic() < deadline, "the bucket never refilled"
        time.sleep(0.2)


def test_requests_without_a_subject_are_not_counted(http: httpx.Client) -> None:
    assert [http.get("/healthz").status_code for _ in range(FLOOD)] == [200] * FLOOD
    # Refused by jwt_authn (401), never by the rate limit.
    assert {http.get("/v1/stream/x/y").status_code for _ in range(FLOOD)} == {401}


def test_live_reads_past_a_subjects_cap_are_refused_by_the_server(
    limited: GatewayStack, http: httpx.Client
) -> None:
    bucket = unique("live")
    path = _stream(http, bucket)
    erin, frank = _subject(bucket), _subject(bucket)
    params = {"offset": "-1", "live": "sse"}
    with contextlib.ExitStack() as held:
        open_reads = [
            held.enter_context(http.stream("GET", path, params=params, headers=bearer(erin)))
            for _ in range(LIVE_CAP)
        ]
        assert [read.status_code for read in open_reads] == [200] * LIVE_CAP
        request_id, tagged = tag()
        refused = http.get(path, params=params, headers={**bearer(erin), **tagged})
        assert refused.status_code == 429
        assert refused.headers["retry-after"] == "5"
        assert "too many live reads" in refused.text
        assert limited.reached_server(request_id)  # the server counts them, not Envoy
        # A long-poll is a live read too; a catch-up read is not.
        long_poll = {"offset": "now", "live": "long-poll"}
        assert http.get(path, params=long_poll, headers=bearer(erin)).status_code == 429
        assert http.get(path, params={"offset": "-1"}, headers=bearer(erin)).status_code == 200
        # Another subject is not counted against erin.
        with http.stream("GET", path, params=params, headers=bearer(frank)) as other:
            assert other.status_code == 200
        # One of erin's reads ends: she may open another.
        open_reads[0].close()
        deadline = time.monotonic() + 30
        while True:
            with http.stream("GET", path, params=params, headers=bearer(erin)) as again:
                if again.status_code == 200:
                    break
            assert time.monotonic() < deadline, "the ended read's slot was never freed"
            time.sleep(0.1)

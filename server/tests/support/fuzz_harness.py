"""Running the request fuzzer against a server over a socket, and judging what came back.

The verdict of a run: no answer of 500 or above; every request answered
(a connection the server drops without an answer counts against it); the
server's ``/healthz`` answers 200 throughout (checked every
``HEALTH_EVERY`` requests) and at the end; the fixture streams read back
exactly as they were created.

Requests go out through httpcore, byte for byte as generated: httpx would
resolve ``..`` and ``.`` in paths before sending. ``DS_FUZZ_SEED`` and
``DS_FUZZ_REQUESTS`` choose the run (``make fuzz`` runs a long one).
"""

from __future__ import annotations

import collections
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import httpcore

from support.request_fuzzer import FIXTURES, FuzzRequest, RequestFuzzer

if TYPE_CHECKING:
    from collections.abc import Mapping

DEFAULT_SEED = 31
DEFAULT_REQUESTS = 1000
HEALTH_EVERY = 50
_TIMEOUTS = {"connect": 10.0, "read": 60.0, "write": 60.0, "pool": 10.0}


def seed_and_count() -> tuple[int, int]:
    """The run's seed and number of requests, from the environment."""
    seed = int(os.environ.get("DS_FUZZ_SEED", DEFAULT_SEED))
    return seed, int(os.environ.get("DS_FUZZ_REQUESTS", DEFAULT_REQUESTS))


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


@dataclass
class FuzzReport:
    """What a run saw: answers by status, and everything that went wrong."""

    seed: int
    requests: int = 0
    statuses: collections.Counter[int] = field(default_factory=collections.Counter)
    failures: list[str] = field(default_factory=list)
    # Requests the HTTP client itself could not send (not the server's doing).
    unsendable: int = 0

    def summary(self) -> str:
        classes = collections.Counter(f"{status // 100}xx" for status in self.statuses.elements())
        return (
            f"seed {self.seed}: {self.requests} requests, "
            + ", ".join(f"{name} {count}" for name, count in sorted(classes.items()))
            + f", unsendable {self.unsendable}, failures {len(self.failures)}"
        )


class Client:
    """Exact requests to one base URL (``http://host:port``), with extra headers on each."""

    def __init__(self, base_url: str, headers: Mapping[str, str] | None = None) -> None:
        parts = urlsplit(base_url)
        self._scheme = parts.scheme.encode()
        self._host = (parts.hostname or "127.0.0.1").encode()
        self._port = parts.port
        self._extra = [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
        self._pool = httpcore.ConnectionPool(max_connections=4)

    def send(
        self, method: str, target: str, headers: list[tuple[bytes, bytes]], body: bytes
    ) -> Answer:
        url = httpcore.URL(
            scheme=self._scheme, host=self._host, port=self._port, target=target.encode("ascii")
        )
        all_headers = [(b"host", self._host), *self._extra, *headers]
        if body or method in ("PUT", "POST", "PATCH"):
            all_headers.append((b"content-length", str(len(body)).encode()))
        response = self._pool.request(
            method.encode(),
            url,
            headers=all_headers,
            content=body,
            extensions={"timeout": _TIMEOUTS},
        )
        headers_seen = {
            k.decode("latin-1").lower(): v.decode("latin-1") for k, v in response.headers
        }
        return Answer(response.status, headers_seen, response.content)

    def get(self, target: str) -> Answer:
        return self.send("GET", target, [], b"")

    def close(self) -> None:
        self._pool.close()


def create_fixtures(client: Client, bucket: str) -> dict[str, Answer]:
    """Create the fixture bucket and streams; return how each reads back."""
    created = client.send("PUT", f"/ds/{bucket}", [], b"")
    assert created.status == 201, created
    for name, (content_type, body, closed) in FIXTURES.items():
        headers = [(b"content-type", content_type.encode())]
        if closed:
            headers.append((b"stream-closed", b"true"))
        answer = client.send("PUT", f"/ds/{bucket}/{name}", headers, body)
        assert answer.status == 201, (name, answer)
    return fixture_state(client, bucket)


def fixture_state(client: Client, bucket: str) -> dict[str, Answer]:
    """Each fixture stream read whole from the start, with the headers that describe it."""
    kept = ("content-type", "stream-next-offset", "stream-closed", "stream-up-to-date")
    state = {}
    for name in FIXTURES:
        answer = client.get(f"/v1/stream/{bucket}/{name}?offset=-1")
        state[name] = Answer(
            answer.status, {k: v for k, v in answer.headers.items() if k in kept}, answer.body
        )
    return state


def run(client: Client, fuzzer: RequestFuzzer, count: int, report: FuzzReport) -> None:
    """Send ``count`` fuzzed requests, recording every answer and failure in ``report``."""
    for index in range(count):
        request = fuzzer.request()
        report.requests += 1
        _send_one(client, fuzzer, request, index, report)
        if (index + 1) % HEALTH_EVERY == 0:
            check_health(client, report, f"after request #{index}")


def _send_one(
    client: Client, fuzzer: RequestFuzzer, request: FuzzRequest, index: int, report: FuzzReport
) -> None:
    try:
        answer = client.send(request.method, request.target, list(request.headers), request.body)
    except httpcore.LocalProtocolError:
        report.unsendable += 1
        return
    except httpcore.TimeoutException as exc:
        report.failures.append(f"#{index} timed out ({exc!r}): {request.describe()}")
        return
    except httpcore.NetworkError as exc:
        report.failures.append(f"#{index} no answer ({exc!r}): {request.describe()}")
        return
    except httpcore.RemoteProtocolError as exc:
        report.failures.append(f"#{index} broken answer ({exc!r}): {request.describe()}")
        return
    report.statuses[answer.status] += 1
    if answer.status >= 500:
        report.failures.append(
            f"#{index} answered {answer.status} {answer.body[:200]!r}: {request.describe()}"
        )
    fuzzer.saw_offset(answer.headers.get("stream-next-offset"))


def check_health(client: Client, report: FuzzReport, when: str) -> None:
    try:
        health = client.get("/healthz")
    except httpcore.HTTPError as exc:
        report.failures.append(f"/healthz {when}: no answer ({exc!r})")
        return
    if health.status != 200:
        report.failures.append(f"/healthz {when}: {health.status}")


def fuzz(
    base_url: str, ns: str, *, headers: Mapping[str, str] | None = None
) -> tuple[FuzzReport, dict[str, Answer], dict[str, Answer]]:
    """A whole run: fixtures, the requests, health, fixtures again (before, after)."""
    seed, count = seed_and_count()
    report = FuzzReport(seed)
    client = Client(base_url, headers)
    try:
        fuzzer = RequestFuzzer(seed, ns)
        before = create_fixtures(client, fuzzer.fixture_bucket)
        run(client, fuzzer, count, report)
        check_health(client, report, "at the end")
        after = fixture_state(client, fuzzer.fixture_bucket)
    finally:
        client.close()
    return report, before, after

"""Seeded random requests against a real ds-server of every backend: never a 5xx.

Each backend gets a server process of its own (small stream limit, live
reads that end within a fraction of a second) and the same seeded run of
``DS_FUZZ_REQUESTS`` requests (``support.request_fuzzer``). The run passes
when no answer is 500 or above, every request is answered, ``/healthz``
answers throughout, and the fixture streams read back unchanged
(``support.fuzz_harness``). The same run through Envoy is in
``proxy/tests/integration/test_gateway_fuzz.py``; ``make fuzz`` runs a long
one.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import pytest
from support.fuzz_harness import fuzz
from support.postgres import postgres_env
from support.server_process import ServerProcess

if TYPE_CHECKING:
    from pathlib import Path

BACKENDS = ("memory", "sqlite", "file-durable", "file-fast", "postgres")
FUZZED_SERVER_ENV = {
    "DS_LIMITS__MAX_STREAM_BYTES": str(64 * 1024),
    "DS_SERVER__LONG_POLL_TIMEOUT_SECS": "0.2",
    "DS_SERVER__SSE_RECONNECT_INTERVAL_SECS": "0.2",
    "DS_SERVER__READ_CHUNK_BYTES": "4096",
}


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_request_gets_a_5xx_and_fixtures_stay_unchanged(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    env = {
        **FUZZED_SERVER_ENV,
        "DS_STORAGE__MODE": backend,
        "DS_STORAGE__DATA_DIR": str(tmp_path / "data"),
    }
    if backend == "postgres":
        env.update(postgres_env(request.getfixturevalue("postgres")))
    with ServerProcess(env=env) as server:
        report, before, after = fuzz(server.url, ns="fz" + uuid.uuid4().hex[:10])
        assert server.running, "the server died"
    print(f"\n{backend}: {report.summary()}")
    assert report.failures == [], "\n".join(report.failures[:20])
    assert after == before
    assert report.requests > 0

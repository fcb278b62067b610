"""The seeded request fuzzer through Envoy: never a 5xx, from the gateway or the server.

The same run as ``server/tests/fuzz`` (``DS_FUZZ_SEED``, ``DS_FUZZ_REQUESTS``),
sent to Envoy with a token for every bucket, in front of a ds-server in
gateway mode: Envoy's path normalisation, JWT filter and rate limits, and
the server's authorization, all see the fuzzed requests. Any answer of 500
or above (Envoy's 503 for a connection the server dropped included) fails
it; so does a fixture stream that reads back changed.
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from gateway_stack import ADMIN, GatewayStack, running_gateway

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "server" / "tests"))

from support.fuzz_harness import fuzz

if TYPE_CHECKING:
    from collections.abc import Iterator

SERVER_ENV = {
    "DS_LIMITS__MAX_STREAM_BYTES": str(64 * 1024),
    "DS_SERVER__LONG_POLL_TIMEOUT_SECS": "0.2",
    "DS_SERVER__SSE_RECONNECT_INTERVAL_SECS": "0.2",
    "DS_SERVER__READ_CHUNK_BYTES": "4096",
}


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayStack]:
    with running_gateway(tmp_path_factory.mktemp("fuzz"), server_env=SERVER_ENV) as gateway:
        yield gateway


def test_no_request_through_envoy_gets_a_5xx_and_fixtures_stay_unchanged(
    fuzzed: GatewayStack,
) -> None:
    ns = "fz" + uuid.uuid4().hex[:10]
    report, before, after = fuzz(fuzzed.url, ns, headers={"Authorization": f"Bearer {ADMIN}"})
    assert fuzzed.server.running
    assert fuzzed.envoy.running
    print(f"\nthrough Envoy: {report.summary()}")
    assert report.failures == [], "\n".join(report.failures[:20])
    assert after == before

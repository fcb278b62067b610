"""Service tokens in files, as a token service renews them: short-lived, replaced atomically.

For the tests of the services that read a token file (ds-sync, the
heartbeat, ds-spark): a gateway that allows one second of clock skew (the
least Envoy takes: 0 is its default of 60), so a token is refused a second
after its ``exp``, and tokens that live a few seconds.
"""

from __future__ import annotations

import contextlib
import os
import time
from datetime import datetime
from typing import TYPE_CHECKING

import httpx
import psycopg
from ds_proxy.tokens import TokenSpec, mint
from ds_stack import components
from ds_stack.launcher import Process
from gateway_stack import GatewayStack

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


def write_token(path: Path, token: str) -> None:
    """Replace the file's token in one step (a rename), as the token service does."""
    staged = path.with_name(f".{path.name}.new")
    staged.write_text(token + "\n", encoding="utf-8")
    os.replace(staged, path)


def short_lived(sub: str, lifetime_secs: int, buckets: tuple[str, ...] = ("*",)) -> tuple[str, int]:
    """A token reading and writing ``buckets`` for ``lifetime_secs``, and its ``exp``."""
    now = int(time.time())
    spec = TokenSpec(sub=sub, read=buckets, write=buckets, expires_in=lifetime_secs)
    return mint(spec, now=now), now + lifetime_secs


def issue(
    path: Path, sub: str, lifetime_secs: int, buckets: tuple[str, ...] = ("*",)
) -> tuple[str, int]:
    """Put a fresh token for ``sub`` in ``path`` (one rename); the token and its ``exp``."""
    token, exp = short_lived(sub, lifetime_secs, buckets)
    write_token(path, token)
    return token, exp


def admin_client(gateway_url: str) -> httpx.Client:
    """A client through the gateway with a token for every bucket: the test's own requests."""
    token, _ = short_lived("test-admin", 3600)
    return httpx.Client(base_url=gateway_url, headers={"Authorization": f"Bearer {token}"})


def event_times(gateway_url: str, token: str, stream: str) -> list[float]:
    """When each session event of ``stream`` says it happened (``headers.timestamp``)."""
    response = httpx.get(
        f"{gateway_url}/v1/stream/{stream}",
        params={"offset": "-1"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 200, response.text
    return [
        datetime.fromisoformat(event["headers"]["timestamp"]).timestamp()
        for event in response.json()
    ]


def heartbeat_reading(
    token_file: Path, *, gateway_url: str, postgres_url: str, log_path: Path, interval_secs: float
) -> Process:
    """The heartbeat (not started) appending through the gateway with the token in ``token_file``.

    Its ``items`` table is made here (ds-sync's migrations are not run).
    """
    with psycopg.connect(postgres_url, autocommit=True) as db:
        db.execute("CREATE TABLE items (id bigserial PRIMARY KEY, title text, body text)")
    return Process(
        components.heartbeat(
            server_url=gateway_url,
            postgres_url=postgres_url,
            token=None,
            token_file=token_file,
            interval_secs=interval_secs,
            log_path=log_path,
        )
    )


SKEW_SECS = 1


def wait_past(exp: int) -> None:
    """Sleep until the gateway refuses a token with this ``exp``."""
    time.sleep(max(0.0, exp + SKEW_SECS + 1.5 - time.time()))


def refused(gateway_url: str, token: str) -> bool:
    """Whether the gateway now answers the token 401."""
    response = httpx.get(
        f"{gateway_url}/v1/stream/no-such-stream", headers={"Authorization": f"Bearer {token}"}
    )
    return response.status_code == 401


@contextlib.contextmanager
def strict_gateway(
    workdir: Path, server_env: dict[str, str] | None = None
) -> Iterator[GatewayStack]:
    """Envoy (1 s of clock skew) in front of a ds-server, for as long as the block runs."""
    workdir.mkdir(parents=True, exist_ok=True)
    stack = GatewayStack(workdir, server_env, clock_skew_secs=SKEW_SECS)
    stack.start()
    try:
        yield stack
    finally:
        stack.stop()

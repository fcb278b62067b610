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
from typing import TYPE_CHECKING

import httpx
from ds_proxy.tokens import TokenSpec, mint
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

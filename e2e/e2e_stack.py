"""The stack under test: ``ds_stack.dev.Stack``, the launcher ``make dev`` uses, on free ports.

Only the ports, the state directory, the snapshot schedule (off) and two
timings differ from ``make dev``:
SSE connections end every few seconds (so reconnects, and a token checked
again, happen within a test) and Postgres skips initdb's fsyncs.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any

import httpx
import psycopg
from ds_proxy.tokens import TokenSpec, bucket_token, mint
from ds_stack.dev import Stack, StackConfig, throwaway
from e2e_clients import CountingTransport

SSE_RECONNECT_SECS = 4


def stack_config() -> StackConfig:
    """A stack on free loopback ports with its state in a new directory under /tmp."""
    return throwaway(
        "ds-e2e-",
        # The snapshot tests run the job when they need it; a scheduled run would
        # move the retention of streams other tests read from their start.
        snapshot_secs=0,
        server_env={
            "DS_SERVER__SSE_RECONNECT_INTERVAL_SECS": str(SSE_RECONNECT_SECS),
            "DS_SERVER__LONG_POLL_TIMEOUT_SECS": "5",
        },
    )


@dataclass
class E2E:
    """The running stack, seen from outside: the gateway, tokens, Postgres."""

    stack: Stack

    @property
    def url(self) -> str:
        return self.stack.config.gateway_url

    @property
    def postgres_url(self) -> str:
        return self.stack.config.postgres_url

    def token(self, sub: str = "e2e", *, read: str = "*", write: str = "*") -> str:
        """A token from the committed test key (what an identity provider would issue)."""
        return bucket_token(sub, read=(read,), write=(write,))

    def expiring_token(self, sub: str, bucket: str, valid_secs: int) -> tuple[str, int]:
        """A token for ``bucket`` whose ``exp`` is ``valid_secs`` from now, and that ``exp``.

        Envoy accepts it up to 30 s past ``exp`` (clock skew); live reads end
        at ``exp`` itself, and the server refuses new ones after it.
        """
        now = int(time.time())
        spec = TokenSpec(sub=sub, read=(bucket,), write=(bucket,), expires_in=valid_secs)
        return mint(spec, now=now), now + valid_secs

    def client(self, token: str | None = None) -> httpx.Client:
        """An HTTP client of the gateway carrying ``token`` (default: every bucket)."""
        auth = token if token is not None else self.token()
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {auth}"}, timeout=30.0
        )

    def async_client(self, token: str | None = None) -> httpx.AsyncClient:
        auth = token if token is not None else self.token()
        return httpx.AsyncClient(
            base_url=self.url,
            headers={"Authorization": f"Bearer {auth}"},
            timeout=30.0,
            transport=CountingTransport(),  # producers' retries, counted
        )

    def sql(self, query: str, *params: Any) -> list[tuple[Any, ...]]:
        """Rows of ``query`` on the stack's database (Postgres's own port, as psql would)."""
        with psycopg.connect(self.postgres_url, autocommit=True) as conn:
            return conn.execute(query, params).fetchall()  # type: ignore[arg-type]


def unique(prefix: str) -> str:
    """A name no other test (or run) uses."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"

"""The edge's guard enforcing bucket scopes from the gateway's forwarded identity.

Enabled with ``DS_AUTH__MODE=gateway``. Envoy has already authenticated the
request (signature, issuer, audience, exp/nbf); this guard authorizes it:
401 when the forwarded identity is unusable, 403 when the token's scopes do
not cover the buckets the request touches. For live reads it also applies
the per-subject cap and the token's lifetime (``auth/live_reads.py``): 429
past the cap, 401 once the token has expired.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ds_server.auth.access import required_access
from ds_server.auth.identity import InvalidIdentity, identity_from_payload, single_payload
from ds_server.auth.live_reads import TOKEN_EXPIRES_AT, LiveReadCounter, is_live_read
from ds_server.auth.recent import RecentResults
from ds_server.auth.scopes import MalformedScopes
from ds_server.edge.http import Reply
from ds_server.protocol import headers as h

if TYPE_CHECKING:
    from litestar.types import HTTPScope

    from ds_server.auth.identity import Identity
    from ds_server.auth.scopes import Access

_FORKED_FROM = h.STREAM_FORKED_FROM.encode()
_SUB = h.WRITER_IDENTITY.encode()
_PAYLOAD = h.IDENTITY_PAYLOAD.encode()
# How many token payloads, and how many (method, path) pairs, the guard
# remembers the result of: the clients and streams one server serves at once.
REMEMBERED_RESULTS = 4096
# A request with no forwarded identity came past the gateway: say where to go.
NO_GATEWAY_HINT = (
    "; send requests through the gateway (Envoy: port 8080 with `make dev`), "
    "which verifies the token and forwards its claims"
)
# How soon a refused live read may try again: live reads end within a minute
# (the SSE reconnect interval), so a slot frees up within seconds on a busy subject.
LIVE_READ_RETRY_AFTER_SECS = 5


class GatewayGuard:
    """Lets a request through only with a forwarded identity that grants what it touches."""

    def __init__(
        self,
        *,
        scope_claim: str = "ds",
        max_live_reads_per_sub: int = 0,
        remembered: int = REMEMBERED_RESULTS,
    ) -> None:
        self._scope_claim = scope_claim
        # 0: no cap (the token's lifetime still ends live reads).
        self._live_reads = (
            LiveReadCounter(max_live_reads_per_sub) if max_live_reads_per_sub else None
        )
        # A client sends the same payload on every request, mostly to a few
        # paths: each is decoded or worked out once (auth/recent.py).
        self._identities: RecentResults[bytes, Identity] = RecentResults(remembered)
        self._accesses: RecentResults[tuple[str, str], tuple[Access, ...]] = RecentResults(
            remembered
        )

    def check(self, scope: HTTPScope) -> Reply | None:
        # One pass over the headers: the forwarded payloads, the fork sources,
        # and every header but the writer identity, which is set below.
        payloads: list[bytes] = []
        fork_sources: list[str] = []
        kept: list[tuple[bytes, bytes]] = []
        for item in scope["headers"]:
            name = item[0].lower()
            if name == _PAYLOAD:
                payloads.append(item[1])
            elif name == _FORKED_FROM:
                fork_sources.append(item[1].decode("latin-1"))
            elif name == _SUB:
                continue
            kept.append(item)
        needed = self._needed(scope["method"], scope["path"], fork_sources)
        if not needed:
            return None
        try:
            identity = self._identity(single_payload(payloads))
        except InvalidIdentity as exc:
            reason = str(exc) + (NO_GATEWAY_HINT if exc.missing else "")
            return _refusal(401, reason, challenge=True)
        except MalformedScopes as exc:
            return _refusal(403, str(exc))
        denied = next((access for access in needed if not identity.scopes.allows(access)), None)
        if denied is not None:
            return _refusal(403, _denial(denied))
        # The writer identity (Stream-Seq is ordered per writer) is the verified
        # sub, whatever X-JWT-Sub the request carried.
        kept.append((_SUB, identity.sub.encode("utf-8")))
        scope["headers"] = kept
        if is_live_read(scope["method"], scope["path"], scope["query_string"]):
            return self._admit_live_read(scope, identity)
        return None

    def _needed(self, method: str, path: str, fork_sources: list[str]) -> tuple[Access, ...]:
        if fork_sources:  # forks are rare, and their sources are part of the answer
            return required_access(method, path, fork_sources=fork_sources)
        key = (method, path)
        needed = self._accesses.get(key)
        if needed is None:
            needed = required_access(method, path)
            self._accesses.put(key, needed)
        return needed

    def _identity(self, payload: bytes) -> Identity:
        # Only identities are kept: a payload that fails raises again each time.
        identity = self._identities.get(payload)
        if identity is None:
            identity = identity_from_payload(payload, self._scope_claim)
            self._identities.put(payload, identity)
        return identity

    def finished(self, scope: HTTPScope) -> None:
        """The request has ended (whatever became of it): its live-read slot is free."""
        if self._live_reads is not None:
            self._live_reads.release(scope)

    def _admit_live_read(self, scope: HTTPScope, identity: Identity) -> Reply | None:
        expires_at = identity.expires_at
        if expires_at is not None:
            if expires_at <= time.time():
                # Envoy allows clock skew past exp; a live read would end at once.
                return _refusal(
                    401, "the token has expired; reconnect with a fresh one", challenge=True
                )
            scope[TOKEN_EXPIRES_AT] = expires_at  # type: ignore[typeddict-unknown-key]
        counter = self._live_reads
        if counter is not None and not counter.admit(scope, identity.sub):
            reason = (
                f"too many live reads open for this subject (at most "
                f"{counter.max_per_sub}); retry when one has ended"
            )
            return _refusal(429, reason, retry_after=LIVE_READ_RETRY_AFTER_SECS)
        return None


def _denial(access: Access) -> str:
    where = f"bucket {access.bucket!r}" if access.bucket is not None else "every bucket ('*')"
    return f"the token does not grant {access.mode.value} access to {where}"


def _refusal(
    status: int, reason: str, *, challenge: bool = False, retry_after: int | None = None
) -> Reply:
    headers = {h.CONTENT_TYPE: "text/plain; charset=utf-8", h.CACHE_CONTROL: "no-store"}
    if challenge:
        headers["WWW-Authenticate"] = 'Bearer error="invalid_token"'
    if retry_after is not None:
        headers["Retry-After"] = str(retry_after)
    return Reply(status, headers, reason.encode() + b"\n")

"""Subscription requests that reach a replica other than the leader go on to the leader.

The Host header goes along: subscriptions answer with URLs built from it,
which must be the gateway's, not the leader's own address.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx
from litestar import Request, Response

if TYPE_CHECKING:
    from ds_server.cluster.leadership import Leadership

# Set on a forwarded request: a replica that isn't the leader either answers 503
# instead of forwarding again (two replicas that disagree must not ping-pong).
FORWARDED = "ds-forwarded-by"
_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "content-length",
        "proxy-connection",
    }
)


class Forwarder:
    """Sends a request on to the leader and relays its answer."""

    def __init__(self, leadership: Leadership) -> None:
        self.leadership = leadership
        self._client = httpx.AsyncClient(timeout=httpx.Timeout(30.0))

    async def close(self) -> None:
        await self._client.aclose()

    async def __call__(self, request: Request[Any, Any, Any]) -> Response[bytes] | None:
        """None when this replica serves the request itself (it leads)."""
        leadership = self.leadership
        if leadership.is_leader:
            return None
        leader = leadership.leader_url
        if leader is None or FORWARDED in request.headers:
            return _unavailable("no replica runs the subscriptions right now; retry")
        headers = [
            (name, value)
            for name, value in request.headers.items()
            if name.lower() not in _HOP_BY_HOP
        ]
        headers.append((FORWARDED, leadership.advertise_url))
        # The path as the client sent it: decoding it would change what it names.
        scope = request.scope
        raw = scope.get("raw_path") or scope["path"].encode()
        url = leader.rstrip("/") + raw.decode("latin-1")
        if scope.get("query_string"):
            url += "?" + scope["query_string"].decode("latin-1")
        try:
            answer = await self._client.request(
                request.method, url, headers=headers, content=await request.body()
            )
        except httpx.HTTPError:
            return _unavailable("the replica that runs the subscriptions did not answer; retry")
        relayed = {k: v for k, v in answer.headers.items() if k.lower() not in _HOP_BY_HOP}
        relayed.pop("content-encoding", None)
        return Response(content=answer.content, status_code=answer.status_code, headers=relayed)


def _unavailable(reason: str) -> Response[bytes]:
    return Response(
        content=reason.encode() + b"\n",
        status_code=503,
        headers={"Content-Type": "text/plain; charset=utf-8", "Retry-After": "1"},
    )

"""Liveness for load balancers and the gateway; needs no token."""

from __future__ import annotations

from litestar import Response, get

from ds_server.edge.surfaces import HEALTH_PATH


@get(HEALTH_PATH)
async def healthz() -> Response[bytes]:
    """200 while the server is serving."""
    return Response(content=b"ok\n", headers={"Content-Type": "text/plain; charset=utf-8"})

"""A request's protocol operation: the bounded label every request metric carries.

Paths name streams and buckets without bound, so metrics never carry them:
each request maps to one of ``OPERATIONS`` by its method, its surface
(``edge.surfaces``) and, for reads, its ``live`` mode.
"""

from __future__ import annotations

from ds_server.edge.surfaces import (
    BUCKET_PREFIX,
    HEALTH_PATH,
    SERVER_API_PREFIX,
    STREAM_PREFIX,
    is_viewer,
    stream_route,
    under,
)
from ds_server.protocol.names import RESERVED_STREAM_ID

_STREAM_OPERATIONS = {
    "PUT": "create",
    "POST": "append",
    "GET": "read",
    "HEAD": "head",
    "DELETE": "delete",
}
_BUCKET_OPERATIONS = {"PUT": "bucket_create", "GET": "bucket_get", "DELETE": "bucket_delete"}
_SNAPSHOT_OPERATIONS = {
    "PUT": "snapshot_publish",
    "GET": "snapshot_read",
    "DELETE": "snapshot_delete",
}
_SUBSCRIPTION_OPERATIONS = {
    "PUT": "subscription_put",
    "GET": "subscription_get",
    "DELETE": "subscription_delete",
}
# POST .../subscriptions/{id}/{action}, and DELETE .../{id}/streams/{stream}.
_SUBSCRIPTION_ACTIONS = {
    "streams": "subscription_streams",
    "callback": "subscription_callback",
    "ack": "subscription_ack",
    "claim": "subscription_claim",
    "release": "subscription_release",
}
_LIVE_MODES = {b"live=sse": "read_sse", b"live=long-poll": "read_long_poll"}
OTHER = "other"

OPERATIONS: tuple[str, ...] = (
    *_STREAM_OPERATIONS.values(),
    *_LIVE_MODES.values(),
    *_BUCKET_OPERATIONS.values(),
    "bucket_list",
    *_SNAPSHOT_OPERATIONS.values(),
    "bootstrap",
    *_SUBSCRIPTION_OPERATIONS.values(),
    *_SUBSCRIPTION_ACTIONS.values(),
    "jwks",
    "health",
    "viewer",
    "preflight",
    OTHER,
)


def operation(method: str, path: str, query: bytes) -> str:
    """The operation of a request; ``OTHER`` for what matches none (404s, 405s)."""
    stream_operation = _STREAM_OPERATIONS.get(method)
    if stream_operation is not None and stream_route(path, method) is not None:
        if stream_operation == "read" and query:
            return read_mode(query)
        return stream_operation
    if method == "OPTIONS":
        return "preflight"
    if path == HEALTH_PATH:
        return "health"
    rest = under(path, BUCKET_PREFIX)
    if rest is not None:
        return _bucket_operation(method, rest.split("/"))
    rest = under(path, SERVER_API_PREFIX)
    if rest is not None:
        return _server_api_operation(method, rest.split("/"))
    rest = under(path, STREAM_PREFIX)
    if rest is not None:
        # A top-level stream's extensions (edge.surfaces.TOP_LEVEL_EXTENSION): as on /ds.
        return _bucket_operation(method, ["", *rest.split("/")])
    if is_viewer(path):
        return "viewer"
    return OTHER


def read_mode(query: bytes) -> str:
    """A stream read's operation by its query string: ``read``, ``read_sse``, ``read_long_poll``."""
    for parameter in query.split(b"&"):
        mode = _LIVE_MODES.get(parameter)
        if mode is not None:
            return mode
    return "read"


def _bucket_operation(method: str, parts: list[str]) -> str:
    if len(parts) == 1:
        return _BUCKET_OPERATIONS.get(method, OTHER)
    if len(parts) == 2 and parts[1] == RESERVED_STREAM_ID and method == "GET":
        return "bucket_list"
    if len(parts) == 3 and parts[2] == "bootstrap" and method == "GET":
        return "bootstrap"
    if len(parts) in (3, 4) and parts[2] == "snapshot":
        return _SNAPSHOT_OPERATIONS.get(method, OTHER)
    return OTHER


def _server_api_operation(method: str, parts: list[str]) -> str:
    if parts == ["jwks.json"]:
        return "jwks"
    if len(parts) < 2 or parts[0] != "subscriptions":
        return OTHER
    if len(parts) == 2:
        return _SUBSCRIPTION_OPERATIONS.get(method, OTHER)
    return _SUBSCRIPTION_ACTIONS.get(parts[2], OTHER)

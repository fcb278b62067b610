"""The server's URL surfaces, in one table: prefixes, reserved segments, route matching.

A stream has one name (``chat/room-1``) and two spellings on the wire:

- ``/v1/stream/{path}``: the base protocol; the first segment of the path
  is the stream's bucket (``chat``);
- ``/ds/{bucket}/{stream}``: the extensions (buckets, listings, snapshots,
  bootstrap); ``/ds/{bucket}/{stream}`` is ``/v1/stream/{bucket}/{stream}``.

Besides: ``/v1/stream/__ds/...``, the server's own API (subscriptions;
``__ds`` is never a stream's segment), ``/ui`` (the session viewer) and
``/healthz``.

The dispatcher, authorization (``auth/access.py``) and the app's routers
all read this module and nothing else, so what is authorized is always what
is served. Paths are the router's (``scope["path"]``, percent-decoded).
"""

from __future__ import annotations

import re

from ds_server.protocol.names import RESERVED_SEGMENT, RESERVED_STREAM_ID

STREAM_PREFIX = "/v1/stream"
BUCKET_PREFIX = "/ds"
# The server's own API under the stream prefix (subscriptions, their JWKS).
SERVER_API_PREFIX = f"{STREAM_PREFIX}/{RESERVED_SEGMENT}"
HEALTH_PATH = "/healthz"
# The session viewer's static files: the page needs no token, what it fetches does.
VIEWER_PREFIX = "/ui"
# Paths anyone may call, with no token.
PUBLIC_PATHS = frozenset({HEALTH_PATH})
# Server API endpoints that carry their own credentials: the webhook signing
# JWKS is public, and callbacks / pull-wake acks and releases present the
# subscription's callback token. The gateway skips jwt_authn for exactly these.
SELF_AUTHENTICATED = re.compile(
    re.escape(SERVER_API_PREFIX) + r"/(jwks\.json|subscriptions/[^/]+/(callback|ack|release))"
)
# A first segment starting with "__" is server-owned (``__ds``), never a
# tenant's bucket: only the wildcard scope reaches it.
RESERVED_MARK = "__"

_STREAMS = STREAM_PREFIX + "/"
_BUCKETS = BUCKET_PREFIX + "/"
# A top-level stream (one segment: ``pg-items``) has no /ds spelling, so its
# snapshots and bootstrap are served below its /v1/stream path, as the
# extensions spell them (``{stream_url}/bootstrap``, ``{stream_url}/snapshot/{offset}``).
# These paths are therefore never streams of their own on that surface.
TOP_LEVEL_EXTENSION = re.compile(
    r"(?P<stream>[^/]+)/(?:(?P<bootstrap>bootstrap)|snapshot(?:/(?P<offset>[^/]+))?)/?"
)


def stream_route(path: str, method: str) -> str | tuple[str, str] | None:
    """The stream a stream operation addresses, unvalidated, or None for the app's routes.

    A ``/v1/stream`` path gives its stream path, ``/ds/{bucket}/{stream}``
    its ``(bucket, stream)`` pair. None: the server API (any ``__ds``
    segment), bucket metadata and listings (``GET /ds/{bucket}/streams``),
    snapshots, bootstrap (a top-level stream's too), health, and paths of no surface.
    """
    if path.startswith(_STREAMS):
        rest = path[len(_STREAMS) :]
        if RESERVED_SEGMENT in rest.split("/") or TOP_LEVEL_EXTENSION.fullmatch(rest):
            return None
        return rest
    if path.startswith(_BUCKETS):
        parts = path[len(_BUCKETS) :].split("/")
        if len(parts) != 2 or (parts[1] == RESERVED_STREAM_ID and method == "GET"):
            return None
        return parts[0], parts[1]
    return None


def bucket_of_name(name: str) -> str | None:
    """The bucket of a stream name: its first segment, None when server-owned."""
    first = name.split("/", 1)[0]
    return None if first.startswith(RESERVED_MARK) else first


def bucket_of_path(path: str) -> str | None:
    """The bucket a request path belongs to, or None when it names none."""
    rest = under(path, BUCKET_PREFIX)
    if rest is None:
        rest = under(path, STREAM_PREFIX)
    if rest is None:
        return None
    # Stream paths lose leading and trailing slashes (``stream_path``); do the same.
    return bucket_of_name(rest.strip("/")) or None


# What follows ``/ds/{bucket}/{stream}`` on the paths that still address that stream.
_STREAM_SUFFIXES = frozenset({"bootstrap", "snapshot"})


def stream_of_path(path: str, method: str) -> str | None:
    """The name of the one stream a request path addresses, or None.

    ``/v1/stream/{path}`` names ``{path}`` (without leading and trailing
    slashes), ``/ds/{bucket}/{stream}`` and its ``/bootstrap`` and
    ``/snapshot[/{offset}]`` paths name ``{bucket}/{stream}``. Bucket paths,
    listings, server-owned names (a first segment starting with ``__``) and
    paths of no surface name none.
    """
    route = stream_route(path, method)
    if isinstance(route, str):
        name = route.strip("/")
    elif route is not None:
        name = "/".join(route)
    else:
        rest = under(path, BUCKET_PREFIX)
        parts = [] if rest is None else rest.split("/")
        if len(parts) < 3 or parts[2] not in _STREAM_SUFFIXES:
            return None
        if parts[2] == "bootstrap" and len(parts) != 3:
            return None
        if parts[2] == "snapshot" and len(parts) > 4:
            return None
        name = f"{parts[0]}/{parts[1]}"
    # An empty segment names no stream a scope could mean; server-owned names none at all.
    if "" in name.split("/") or bucket_of_name(name) is None:
        return None
    return name


def bucket_route(path: str) -> str | None:
    """The raw bucket segment of a ``/ds/{bucket}/...`` path, None on other paths."""
    rest = under(path, BUCKET_PREFIX)
    if rest is None:
        return None
    return rest.split("/", 1)[0]


def is_viewer(path: str) -> bool:
    """Whether ``path`` is the session viewer's (``/ui`` and below)."""
    return under(path, VIEWER_PREFIX) is not None


def under(path: str, prefix: str) -> str | None:
    """What follows ``prefix/`` in ``path`` ("" for ``prefix`` itself), None when not below it."""
    if path == prefix:
        return ""
    if path.startswith(prefix + "/"):
        return path[len(prefix) + 1 :]
    return None

"""Which bucket scopes a request needs, from its method, path and fork source.

Rules (docs/security.md):

- ``/ds/{bucket}`` and everything below it: the bucket is the first segment.
- ``/v1/stream/{first}/...``: the first segment of the stream path is the bucket,
  so ``/v1/stream/chat/room-1`` is in bucket ``chat`` (and ``/v1/stream/chat``
  is too).
- GET and HEAD read (catch-up, long-poll, SSE, ``/bootstrap``, snapshots,
  listings); every other method writes. OPTIONS (CORS preflight) needs nothing.
- The subscription JWKS and the callback/ack/release endpoints authenticate
  with the subscription's own callback token, not a user token.
- A request addressed to one stream (``/v1/stream/{path}``, ``/ds/{bucket}/{stream}``
  and its ``/bootstrap`` and ``/snapshot`` paths) names that stream too, so
  a scope for exactly that stream grants it (``Access.stream``).
- ``PUT`` with ``Stream-Forked-From`` also reads the source's bucket: every
  copy of the header is resolved exactly as the fork resolves it
  (``edge/references.fork_source_name``), so the two cannot disagree.
- A path that names no bucket on either surface, a stream whose first
  segment is reserved (``__ds``, ``__anything``: server features that span
  buckets, such as subscriptions; on both surfaces, since they name the same
  streams), and any other path need the wildcard scope. ``/healthz`` is
  public.

The path is the one the router matches (``scope["path"]``, percent-decoded),
so authorization and routing can never disagree about which stream is meant.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ds_server.auth.scopes import Access, Mode
from ds_server.edge.references import fork_source_name
from ds_server.edge.surfaces import (
    PUBLIC_PATHS,
    SELF_AUTHENTICATED,
    bucket_of_name,
    bucket_of_path,
    bucket_route,
    is_viewer,
    stream_of_path,
)
from ds_server.protocol.errors import BadRequest

if TYPE_CHECKING:
    from collections.abc import Iterable

_READ_METHODS = frozenset({"GET", "HEAD"})
_FREE_METHODS = frozenset({"OPTIONS"})


def required_access(
    method: str, path: str, *, fork_sources: Iterable[str] = ()
) -> tuple[Access, ...]:
    """The accesses a request needs; empty when it needs none."""
    method = method.upper()
    if path in PUBLIC_PATHS or method in _FREE_METHODS:
        return ()
    if SELF_AUTHENTICATED.fullmatch(path):
        return ()
    mode = Mode.READ if method in _READ_METHODS else Mode.WRITE
    if mode is Mode.READ and is_viewer(path):
        return ()
    needed = [Access(bucket_of_path(path), mode, stream_of_path(path, method))]
    if method == "PUT":
        request_bucket = bucket_route(path)
        # Every copy of the header counts, whichever one the route ends up reading.
        for source in fork_sources:
            try:
                name = fork_source_name(source, bucket=request_bucket)
            except BadRequest:
                continue  # the route resolves it the same way and answers 400
            bucket = bucket_of_name(name)
            needed.append(Access(bucket, Mode.READ, name if bucket is not None else None))
    return tuple(dict.fromkeys(needed))

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
- ``PUT`` with ``Stream-Forked-From`` also reads the source's bucket.
- A path that names no bucket on either surface, a reserved first segment
  (``__ds``, ``__anything``: server features that span buckets, such as
  subscriptions), and any other path need the wildcard scope. ``/healthz`` is
  public.

The path is the one the router matches (``scope["path"]``, percent-decoded),
so authorization and routing can never disagree about which stream is meant.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ds_server.auth.scopes import Access, Mode

if TYPE_CHECKING:
    from collections.abc import Iterable

BUCKET_PREFIX = "/ds"
PUBLIC_PATHS = frozenset({"/healthz"})
# Subscription endpoints that carry their own credentials: the webhook signing
# JWKS is public, and callbacks / pull-wake acks and releases present the
# subscription's callback token. The gateway skips jwt_authn for exactly these.
SELF_AUTHENTICATED = re.compile(
    r"/v1/stream/__ds/(jwks\.json|subscriptions/[^/]+/(callback|ack|release))"
)
_READ_METHODS = frozenset({"GET", "HEAD"})
_FREE_METHODS = frozenset({"OPTIONS"})
# Server-owned first segments on /v1/stream (``__ds``) are not buckets. Bucket
# ids on /ds may start with "__", so the mark applies to /v1/stream only.
_RESERVED_MARK = "__"


def required_access(
    method: str, path: str, *, stream_prefix: str, fork_sources: Iterable[str] = ()
) -> tuple[Access, ...]:
    """The accesses a request needs; empty when it needs none."""
    method = method.upper()
    if path in PUBLIC_PATHS or method in _FREE_METHODS:
        return ()
    if SELF_AUTHENTICATED.fullmatch(path):
        return ()
    mode = Mode.READ if method in _READ_METHODS else Mode.WRITE
    bucket = bucket_of(path, stream_prefix=stream_prefix)
    needed = [Access(bucket, mode)]
    if method == "PUT":
        on_buckets = _under(path, BUCKET_PREFIX) is not None
        # Every copy of the header counts, whichever one the route ends up reading.
        for source in fork_sources:
            for source_bucket in _fork_source_buckets(
                source, bucket, stream_prefix=stream_prefix, on_buckets=on_buckets
            ):
                needed.append(Access(source_bucket, Mode.READ))
    return tuple(dict.fromkeys(needed))


def bucket_of(path: str, *, stream_prefix: str) -> str | None:
    """The bucket a request path belongs to, or None when it names none."""
    rest = _under(path, BUCKET_PREFIX)
    if rest is not None:
        return _first_segment(rest)
    rest = _under(path, stream_prefix)
    if rest is not None:
        first = _first_segment(rest)
        return None if first is None or first.startswith(_RESERVED_MARK) else first
    return None


def _under(path: str, prefix: str) -> str | None:
    if path == prefix:
        return ""
    if path.startswith(prefix + "/"):
        return path[len(prefix) + 1 :]
    return None


def _first_segment(rest: str) -> str | None:
    # The server strips leading and trailing slashes off stream paths; do the same.
    first = rest.strip("/").split("/", 1)[0]
    return first or None


def _fork_source_buckets(
    source: str, request_bucket: str | None, *, stream_prefix: str, on_buckets: bool
) -> tuple[str | None, ...]:
    if not on_buckets:
        # Read the source exactly as the stream routes do: an optional stream
        # prefix, then a stream path whose first segment is the bucket.
        if source.startswith(stream_prefix + "/"):
            source = source[len(stream_prefix) :]
        return (bucket_of(f"{stream_prefix}/{source.strip('/')}", stream_prefix=stream_prefix),)
    # The /ds surface's fork syntax is not settled: require every bucket the
    # source could name (absolute on either surface, bucket-local, "bucket/stream").
    if source.startswith((BUCKET_PREFIX + "/", stream_prefix + "/")):
        return (bucket_of(source, stream_prefix=stream_prefix),)
    if "/" in source.strip("/"):
        return tuple(dict.fromkeys((request_bucket, _first_segment(source))))
    return (request_bucket,)

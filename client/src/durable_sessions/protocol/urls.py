"""Where things live on a server: the two stream surfaces and the extension endpoints.

Stream paths are ``/``-separated segments; each segment is percent-encoded
on its own, so a path keeps its structure in the URL.
"""

from __future__ import annotations

from urllib.parse import quote, urlsplit

STREAM_PREFIX = "/v1/stream"
BUCKET_PREFIX = "/ds"
SUBSCRIPTIONS_PATH = "__ds/subscriptions"


def quote_path(path: str) -> str:
    """``path`` with each segment percent-encoded (a leading ``/`` is dropped)."""
    return "/".join(quote(segment, safe="") for segment in path.strip("/").split("/"))


def stream_url(base_url: str, path: str) -> str:
    """The protocol URL of stream ``path``: ``{base}/v1/stream/{path}``."""
    return f"{base_url.rstrip('/')}{STREAM_PREFIX}/{quote_path(path)}"


def bucket_url(base_url: str, bucket: str) -> str:
    """A bucket: ``{base}/ds/{bucket}`` (PUT creates it)."""
    return f"{base_url.rstrip('/')}{BUCKET_PREFIX}/{quote(bucket, safe='')}"


def bucket_stream_url(base_url: str, path: str) -> str:
    """Stream ``{bucket}/{stream}`` on the extension surface, where snapshots and
    ``/bootstrap`` live: ``{base}/ds/{bucket}/{stream}``."""
    return f"{base_url.rstrip('/')}{BUCKET_PREFIX}/{quote_path(path)}"


def listing_url(base_url: str, bucket: str) -> str:
    """The paged listing of a bucket's streams."""
    return bucket_url(base_url, bucket) + "/streams"


def bootstrap_url(stream: str) -> str:
    """``/bootstrap`` of a bucket stream's URL."""
    return stream.rstrip("/") + "/bootstrap"


def snapshot_url(stream: str, offset: str) -> str:
    """The snapshot of a bucket stream's URL at ``offset`` (offsets are opaque: encoded)."""
    return stream.rstrip("/") + "/snapshot/" + quote(offset, safe="")


def subscription_url(base_url: str, subscription_id: str) -> str:
    """A pull-wake subscription under the reserved ``__ds`` namespace."""
    return f"{stream_url(base_url, SUBSCRIPTIONS_PATH)}/{quote(subscription_id, safe='')}"


def bootstrap_url_of(url: str) -> str | None:
    """Where the stream at ``url`` serves ``/bootstrap``, or None when no surface has it.

    Bucket streams serve it on ``/ds/{bucket}/{stream}/bootstrap``; the same
    stream spelled ``/v1/stream/{bucket}/{stream}`` is mapped there. A
    top-level stream (one segment, like ``pg-items``) has no ``/ds``
    spelling: its bootstrap is ``/v1/stream/{stream}/bootstrap``, on servers
    that serve one there. Deeper paths have none.
    """
    parts = urlsplit(url)
    for prefix in (BUCKET_PREFIX, STREAM_PREFIX):
        if not parts.path.startswith(prefix + "/"):
            continue
        rest = parts.path[len(prefix) + 1 :].strip("/")
        segments = len(rest.split("/"))
        if segments == 2:
            return parts._replace(path=f"{BUCKET_PREFIX}/{rest}/bootstrap", query="").geturl()
        if segments == 1 and prefix == STREAM_PREFIX:
            return parts._replace(path=f"{STREAM_PREFIX}/{rest}/bootstrap", query="").geturl()
        return None
    return None

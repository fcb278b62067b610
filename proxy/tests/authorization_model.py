"""A model of who may touch what, for property tests of authorization.

The server's store is wrapped by a spy that records every stream and bucket
a request makes it look at or change. The oracle judges each record against
the token's scopes with the plain rule of docs/security.md: a stream's
bucket is the first segment of its name, and names whose first segment
starts with ``__`` need the wildcard. It shares no code with
``ds_server.auth``, so a request that reaches data its token does not grant
is caught whichever way the server was talked into it.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ds_server.stores.base import CreateRequest, Store
from hypothesis import strategies as st

if TYPE_CHECKING:
    from collections.abc import Callable

    from ds_server.live import LiveNotifier
    from ds_server.protocol.offsets import Sentinel
    from ds_server.settings import Settings
    from ds_server.stores.base import (
        AppendRequest,
        AppendResult,
        BootstrapStart,
        BucketInfo,
        CreateResult,
        ReadResult,
        Retention,
        SnapshotInfo,
        StreamInfo,
        StreamListing,
    )

BUCKETS = ("alpha", "bravo", "chat", "other")
STREAM_IDS = ("s", "t")
# Streams outside every /ds bucket: a top-level one, one whose first segment
# is "ds" (the /ds prefix spelled as a stream path), and a server-owned one.
TOP_LEVEL = ("secret", "ds/other/s", "__sys/s")
WORLD = (*(f"{bucket}/{stream}" for bucket in BUCKETS for stream in STREAM_IDS), *TOP_LEVEL)
# Stream names grant one stream each; the server-owned one must grant nothing.
SCOPE_NAMES = (*BUCKETS, "secret", "ds", "__sys", "*", "chat/s", "alpha/t", "ds/other/s", "__sys/s")
TEXT = "text/plain"


def bucket_of(name: str) -> str | None:
    """The bucket a stream name belongs to; None when only the wildcard reaches it."""
    first = name.split("/", 1)[0]
    return None if first.startswith("__") else first


@dataclass(frozen=True)
class Touch:
    """One thing a request made the store look at (read) or change (write)."""

    bucket: str | None
    mode: str  # "read", "write", or "exists" (a bucket's existence: either scope)
    what: str


@dataclass(frozen=True)
class Token:
    """The scopes of a token's ``ds`` claim: buckets, and single streams (names with a ``/``)."""

    read: frozenset[str]
    write: frozenset[str]

    def grants(self, touch: Touch) -> bool:
        scopes = {"read": self.read, "write": self.write, "exists": self.read | self.write}
        granted = scopes[touch.mode]
        if "*" in granted:
            return True
        if touch.bucket is None:
            return False
        # A stream touch's ``what`` is the stream's name; a bucket's starts with /ds/.
        if touch.bucket in granted or touch.what in granted:
            return True
        # Whether a bucket exists is no secret to a token granted a stream in it.
        return touch.mode == "exists" and any(n.startswith(f"{touch.bucket}/") for n in granted)

    def claim(self) -> dict[str, list[str]]:
        return {"read": sorted(self.read), "write": sorted(self.write)}


@dataclass
class SpyStore(Store):
    """A store that records every stream and bucket it is asked about, then delegates."""

    inner: Store
    record: Callable[[Touch], None]

    def __post_init__(self) -> None:
        super().__init__(self.inner.live)

    @classmethod
    def from_settings(cls, settings: Settings, live: LiveNotifier) -> SpyStore:
        raise NotImplementedError("built around another store")

    def _stream(self, name: str, mode: str) -> None:
        self.record(Touch(bucket_of(name), mode, name))

    def _bucket(self, bucket_id: str, mode: str) -> None:
        # A /ds bucket id is a bucket, even one spelled like a server-owned name.
        self.record(Touch(bucket_of(bucket_id), mode, f"/ds/{bucket_id}"))

    async def start(self) -> None:
        await self.inner.start()

    async def stop(self) -> None:
        await self.inner.stop()

    async def create(self, request: CreateRequest) -> CreateResult:
        self._stream(request.path, "write")
        if request.fork is not None:
            self._stream(request.fork.source, "read")
        return await self.inner.create(request)

    async def append(self, request: AppendRequest) -> AppendResult:
        self._stream(request.path, "write")
        return await self.inner.append(request)

    async def read(self, path: str, offset: int | Sentinel, max_bytes: int) -> ReadResult:
        self._stream(path, "read")
        return await self.inner.read(path, offset, max_bytes)

    async def head(self, path: str) -> StreamInfo:
        self._stream(path, "read")
        return await self.inner.head(path)

    async def delete(self, path: str) -> None:
        self._stream(path, "write")
        await self.inner.delete(path)

    async def read_messages(
        self, path: str, start: int, max_bytes: int, *, retention: Retention | None = None
    ) -> ReadResult:
        self._stream(path, "read")
        return await self.inner.read_messages(path, start, max_bytes, retention=retention)

    async def begin_bootstrap(self, path: str, max_bytes: int) -> BootstrapStart:
        self._stream(path, "read")
        return await self.inner.begin_bootstrap(path, max_bytes)

    async def release(self, retention: Retention) -> None:
        await self.inner.release(retention)

    async def create_bucket(self, bucket_id: str) -> BucketInfo:
        self._bucket(bucket_id, "write")
        return await self.inner.create_bucket(bucket_id)

    async def get_bucket(self, bucket_id: str) -> BucketInfo:
        self._bucket(bucket_id, "exists")
        return await self.inner.get_bucket(bucket_id)

    async def delete_bucket(self, bucket_id: str) -> None:
        self._bucket(bucket_id, "write")
        await self.inner.delete_bucket(bucket_id)

    async def list_bucket_streams(
        self, bucket_id: str, *, prefix: str, after: str | None, limit: int
    ) -> StreamListing:
        self._bucket(bucket_id, "read")
        return await self.inner.list_bucket_streams(
            bucket_id, prefix=prefix, after=after, limit=limit
        )

    async def publish_snapshot(
        self, path: str, offset: int, content_type: str, data: bytes
    ) -> SnapshotInfo:
        self._stream(path, "write")
        return await self.inner.publish_snapshot(path, offset, content_type, data)

    async def read_snapshot(self, path: str, offset: int) -> tuple[SnapshotInfo, bytes]:
        self._stream(path, "read")
        return await self.inner.read_snapshot(path, offset)

    async def delete_snapshot(self, path: str, offset: int) -> None:
        self._stream(path, "write")
        await self.inner.delete_snapshot(path, offset)


# -- requests ---------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One HTTP request, its path exactly as sent (percent-escapes included)."""

    method: str
    target: str
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""

    def describe(self) -> str:
        return f"{self.method} {self.target} {list(self.headers)}"


_SAFE_TO_ENCODE = string.ascii_lowercase + "/_"


@st.composite
def _escaped(draw: st.DrawFn, text: str) -> str:
    """``text`` with some of its letters, slashes and underscores percent-escaped."""
    out = []
    for char in text:
        if char in _SAFE_TO_ENCODE and draw(st.integers(0, 5)) == 0:
            out.append(quote(char, safe="") if char != "/" else "%2F")
        else:
            out.append(char)
    return "".join(out)


@st.composite
def stream_paths(draw: st.DrawFn, name: str) -> str:
    """A request path naming stream ``name``, on either surface, maybe escaped."""
    bucket, _, stream = name.partition("/")
    spellings = [f"/v1/stream/{name}"]
    if stream and "/" not in stream:
        spellings.append(f"/ds/{bucket}/{stream}")
    spelled = draw(st.sampled_from(spellings))
    prefix = "/v1/stream/" if spelled.startswith("/v1/stream/") else "/ds/"
    return prefix + draw(_escaped(spelled[len(prefix) :]))


@st.composite
def fork_sources(draw: st.DrawFn) -> str:
    """A Stream-Forked-From value: any spelling, valid or not, of any stream."""
    name = draw(st.sampled_from(WORLD))
    bucket, _, stream = name.partition("/")
    spellings = [
        f"/v1/stream/{name}",
        name,
        f"/{name}",
        f"/ds/{name}",
        stream or name,
        stream or name,
        bucket,
        f"ds/{name}",
        f"/v1/stream/ds/{name}",
    ]
    return draw(_escaped(draw(st.sampled_from(spellings))))


@st.composite
def calls(draw: st.DrawFn) -> tuple[Call, str, str | None]:
    """One request of any operation on either surface, the bucket its path names and the
    stream it addresses (None for bucket operations)."""
    name = draw(st.sampled_from(WORLD))
    bucket = name.partition("/")[0]
    fresh_bucket = draw(st.sampled_from((*BUCKETS, *BUCKETS, "secret", "ds", "__sys")))
    fresh = f"{fresh_bucket}/new-{draw(st.integers(0, 10**9))}"
    kind = draw(st.sampled_from(_KINDS))
    text = (("Content-Type", TEXT),)
    stream = name.partition("/")[2] or "s"
    # /ds/{bucket}/{stream}/...: a stream id is one segment, else the path names no stream.
    addressed = f"{bucket}/{stream}" if "/" not in stream else None
    if kind == "read":
        return Call("GET", draw(stream_paths(name)) + "?offset=-1"), bucket, name
    if kind == "head":
        return Call("HEAD", draw(stream_paths(name))), bucket, name
    if kind == "append":
        return Call("POST", draw(stream_paths(name)), text, b"appended"), bucket, name
    if kind == "delete":
        return Call("DELETE", draw(stream_paths(name))), bucket, name
    if kind == "create":
        return Call("PUT", draw(stream_paths(fresh)), text), fresh_bucket, fresh
    if kind == "fork":
        sources = draw(st.lists(fork_sources(), min_size=1, max_size=2))
        headers = tuple(("Stream-Forked-From", source) for source in sources)
        return Call("PUT", draw(stream_paths(fresh)), headers), fresh_bucket, fresh
    if kind == "bucket":
        method = draw(st.sampled_from(("GET", "HEAD", "DELETE")))
        return Call(method, f"/ds/{bucket}"), bucket, None
    if kind == "listing":
        return Call("GET", f"/ds/{bucket}/streams"), bucket, None
    if kind == "bootstrap":
        return Call("GET", f"/ds/{bucket}/{stream}/bootstrap"), bucket, addressed
    if kind == "snapshot":
        offset = "00000000000000000000"
        method = draw(st.sampled_from(("GET", "PUT", "DELETE")))
        suffix = "snapshot" if method == "GET" else f"snapshot/{offset}"
        body = b'{"state":{}}' if method == "PUT" else b""
        headers = (("Content-Type", "application/json"),) if method == "PUT" else ()
        return (
            Call(method, f"/ds/{bucket}/{stream}/{suffix}", headers, body),
            bucket,
            addressed,
        )
    new_bucket = f"{fresh_bucket.strip('_')}-{draw(st.integers(0, 10**6))}"
    return Call("PUT", f"/ds/{new_bucket}"), new_bucket, None


# Forks name a second stream, so they are where surfaces can disagree: drawn most.
_KINDS = (
    *("read", "head", "append", "delete", "create"),
    *("fork", "fork", "fork", "fork"),
    *("bucket", "listing", "bootstrap", "snapshot", "new-bucket"),
)


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[Token, Call]:
    """A request and a token; the token usually grants the bucket the path names, or the
    stream it addresses, so what decides is everything else the request touches (fork
    sources above all).
    """
    call, named, stream = draw(calls())
    choice = draw(st.integers(0, 5))
    if choice == 0:
        base: frozenset[str] = frozenset()
    elif choice == 1 and stream is not None:
        base = frozenset({stream})
    else:
        base = frozenset({named})
    read = draw(st.frozensets(st.sampled_from(SCOPE_NAMES), max_size=3)) | base
    write = draw(st.frozensets(st.sampled_from(SCOPE_NAMES), max_size=3)) | base
    return Token(read=read, write=write), call


def world_requests() -> list[tuple[str, str, dict[str, Any]]]:
    """(method, path, extra) to create the world through the API, buckets first."""
    steps: list[tuple[str, str, dict[str, Any]]] = [("PUT", f"/ds/{b}", {}) for b in BUCKETS]
    for name in WORLD:
        steps.append(
            ("PUT", f"/v1/stream/{name}", {"headers": {"Content-Type": TEXT}, "content": name})
        )
    return steps

"""durable-sessions: the Python SDK for durable sessions on Durable Streams.

Built on the official ``durable-streams`` client (its exceptions, its
long-poll reads) and on httpx where that client falls short (SSE with
reconnects, bootstrap, idempotent producers, tokens).

- `AsyncIdempotentProducer` / `IdempotentProducer`: exactly-once,
  batched, pipelined appends;
- `MaterializedState` and `StateFollower`: the State Protocol,
  materialised, live;
- `follow`, `bootstrap`: a stream's snapshot and tail;
- `StreamServer`: a server's streams by path, for synchronous batch
  readers (listings, page reads, streamed bootstraps, snapshots);
- `AsyncStreamServer`: its asyncio twin for services (listings, creating,
  appending, snapshots, pull-wake subscriptions);
- `durable_sessions.tokens`: bearer tokens for every request;
- `durable_sessions.protocol`: the protocol's vocabulary;
- `durable_sessions.sessions`: session events as a typed API (writers,
  follower, state, forks, presence that expires);
- `durable_sessions.aisdk`: the server half of the AI SDK's durable chat
  transport, with Litestar and Starlette/FastAPI adapters.
"""

from __future__ import annotations

# The official client's error types: what every call here raises for an HTTP failure.
from durable_streams import DurableStreamError, RetentionGoneError, StreamNotFoundError

from durable_sessions._live import sse_session
from durable_sessions.async_server import AsyncStreamServer, UnexpectedStatusError
from durable_sessions.bootstrap import bootstrap, fetch_bootstrap
from durable_sessions.events import Bootstrapped, Event, Update
from durable_sessions.follow import LiveMode, follow
from durable_sessions.producer import (
    AsyncIdempotentProducer,
    CloseResult,
    DeliveryTimeoutError,
    IdempotentProducer,
    ProducerClosedError,
    ProducerFailedError,
    RetryPolicy,
    SequenceGapError,
    StaleEpochError,
    StreamClosedError,
)
from durable_sessions.protocol.bootstrap import Bootstrap, BootstrapFormatError, parse_bootstrap
from durable_sessions.protocol.listing import StreamInfo
from durable_sessions.server import ServerUnreachableError, StreamServer
from durable_sessions.snapshots import publish_snapshot
from durable_sessions.state import (
    MaterializedState,
    StateBatch,
    StateFollower,
    StateMessageError,
)
from durable_sessions.streams import create, head
from durable_sessions.tokens import (
    CallableToken,
    FileToken,
    StaticToken,
    TokenAuth,
    TokenProvider,
    TokenSource,
    token_provider,
)

__all__ = [
    "AsyncIdempotentProducer",
    "AsyncStreamServer",
    "Bootstrap",
    "BootstrapFormatError",
    "Bootstrapped",
    "CallableToken",
    "CloseResult",
    "DeliveryTimeoutError",
    "DurableStreamError",
    "Event",
    "FileToken",
    "IdempotentProducer",
    "LiveMode",
    "MaterializedState",
    "ProducerClosedError",
    "ProducerFailedError",
    "RetentionGoneError",
    "RetryPolicy",
    "SequenceGapError",
    "ServerUnreachableError",
    "StaleEpochError",
    "StateBatch",
    "StateFollower",
    "StateMessageError",
    "StaticToken",
    "StreamClosedError",
    "StreamInfo",
    "StreamNotFoundError",
    "StreamServer",
    "TokenAuth",
    "TokenProvider",
    "TokenSource",
    "UnexpectedStatusError",
    "Update",
    "bootstrap",
    "create",
    "fetch_bootstrap",
    "follow",
    "head",
    "parse_bootstrap",
    "publish_snapshot",
    "sse_session",
    "token_provider",
]

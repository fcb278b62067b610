"""POSTing a table's batches to its stream as an idempotent producer.

Every body carries ``Producer-Id`` (stable per table), ``Producer-Epoch``
and ``Producer-Seq`` as stored with the batch. The server appends a new seq
(200) and answers 204 to one it has: that is how a batch resent after a
crash is kept once. Network and server errors are retried with the same
seq until they succeed. What a retry can't cure is raised:

- ``Fenced`` (403): a newer ds-sync state for this table took the stream;
- ``ProducerLost``: the server's producer state is not the one stored here
  (409 sequence gap, the stream gone, or a 204 for a body never sent);
  the table is synced again from scratch under a new epoch;
- ``StreamRefused``: the stream is closed or is not JSON.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from durable_sessions.protocol.content_types import JSON
from durable_sessions.protocol.headers import (
    CONTENT_TYPE,
    PRODUCER_EPOCH,
    PRODUCER_EXPECTED_SEQ,
    PRODUCER_ID,
    PRODUCER_SEQ,
    STREAM_CLOSED,
)

from ds_sync.backoff import Backoff
from ds_sync.mirror.model import TableRefused

if TYPE_CHECKING:
    from durable_sessions.async_server import AsyncStreamServer
    from durable_sessions.http1 import Response

    from ds_sync.metrics import TableMetrics

log = logging.getLogger("ds_sync.mirror")


class Fenced(Exception):
    """The server has a newer epoch for this producer: another ds-sync owns the table now."""


class ProducerLost(Exception):
    """The server's producer state for the stream is not ours: sync from scratch."""


class StreamRefused(TableRefused):
    """The stream can't take the table's messages (closed, or not JSON)."""


def producer_id(table_qualified: str) -> str:
    """The Producer-Id of a table's feed: the same for every ds-sync, so epochs fence."""
    return f"ds-sync:{table_qualified}"


async def post(
    api: AsyncStreamServer,
    stream: str,
    ident: str,
    epoch: int,
    seq: int,
    body: bytes,
    *,
    resent: bool,
    metrics: TableMetrics,
) -> bool:
    """POST one body until the server answers; True when appended now, False for a 204.

    ``resent``: the body may have reached the server before (a batch found in
    the outbox at start), so a 204 is expected; otherwise a 204 means the
    server's state is not ours.
    """
    headers = {
        **await api.auth_headers(),
        CONTENT_TYPE: JSON,
        PRODUCER_ID: ident,
        PRODUCER_EPOCH: str(epoch),
        PRODUCER_SEQ: str(seq),
    }
    backoff = Backoff(cap=10.0)
    while True:
        try:
            response = await api.lean.request(
                "POST", api.stream_url(stream), content=body, headers=headers
            )
        except (OSError, TimeoutError) as exc:
            # The server may have appended it before the answer was lost.
            resent = True
            await _pause(backoff, metrics, f"POST {stream} seq {seq}: {type(exc).__name__}: {exc}")
            continue
        status = response.status_code
        if status == 200:
            return True
        if status == 204:
            if not resent:
                raise ProducerLost(
                    f"the server already had seq {seq} of epoch {epoch} for {stream}, which this "
                    "ds-sync never sent (its database is older than the stream?)"
                )
            metrics.duplicates += 1
            return False
        _refusal(response, stream, epoch, seq)
        await _pause(
            backoff, metrics, f"POST {stream} seq {seq}: HTTP {status} {response.text[:200]}"
        )


def _refusal(response: Response, stream: str, epoch: int, seq: int) -> None:
    """Raise what the answer means when a retry can't change it; return for retryable ones."""
    status = response.status_code
    if status == 403:
        current = response.headers.get(PRODUCER_EPOCH.lower(), "?")
        raise Fenced(f"{stream}: the server has epoch {current}, newer than ours ({epoch})")
    if status == 404:
        raise ProducerLost(f"stream {stream} no longer exists")
    if status == 409 and PRODUCER_EXPECTED_SEQ.lower() in response.headers:
        expected = response.headers[PRODUCER_EXPECTED_SEQ.lower()]
        raise ProducerLost(f"{stream}: the server expects seq {expected}, ours is {seq}")
    if status == 409 and response.headers.get(STREAM_CLOSED.lower(), "").lower() == "true":
        raise StreamRefused(f"stream {stream} is closed: nothing more can be appended")
    if status == 409:
        raise StreamRefused(f"stream {stream} refuses JSON appends: {response.text[:200]}")
    if 400 <= status < 500 and status not in (408, 429):
        raise StreamRefused(f"POST {stream}: HTTP {status} {response.text[:200]}")


async def _pause(backoff: Backoff, metrics: TableMetrics, problem: str) -> None:
    metrics.errors += 1
    delay = backoff.next_delay()
    log.warning("%s; retrying in %.2fs", problem, delay)
    await asyncio.sleep(delay)

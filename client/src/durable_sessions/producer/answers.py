"""What the server's answers to a producer mean: pure decisions, no I/O.

- a 204 is a duplicate: our own earlier attempt (kept once), or a sign that
  another session of this producer id already wrote this epoch;
- a 403 names the server's epoch, newer than ours;
- a 409 with ``Producer-Expected-Seq`` is a gap (earlier batches not there
  yet); with ``Stream-Closed`` the stream is closed; any other refusal is an
  error no retry changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from durable_streams import DurableStreamError

from durable_sessions._errors import http_error
from durable_sessions.producer.errors import StreamClosedError
from durable_sessions.protocol.headers import (
    PRODUCER_EPOCH,
    PRODUCER_EXPECTED_SEQ,
    PRODUCER_SEQ,
    STREAM_CLOSED,
    is_true,
)

if TYPE_CHECKING:
    import httpx

    from durable_sessions.producer.batches import Batch


def int_header(response: httpx.Response, name: str) -> int | None:
    """An integer header, None when absent; a malformed one is a protocol error."""
    value = response.headers.get(name)
    try:
        return None if value is None else int(value)
    except ValueError:
        raise DurableStreamError(f"malformed {name}: {value!r}") from None


def server_epoch(response: httpx.Response, ours: int) -> int:
    """The epoch the server holds, as its answer says (``ours`` when it does not say)."""
    epoch = int_header(response, PRODUCER_EPOCH)
    return ours if epoch is None else epoch


def duplicate_is_ours(batch: Batch, response: httpx.Response, next_seq: int) -> bool:
    """Whether a 204 for ``batch`` answers an earlier attempt of ours.

    Only if an earlier attempt may have arrived (its outcome was unknown),
    and the server's highest seq for the epoch is one we have sent (below
    ``next_seq``). Otherwise another session wrote this (epoch, seq): a
    process restarted with the epoch its previous life used.
    """
    highest = int_header(response, PRODUCER_SEQ)
    return batch.maybe_delivered and (highest is None or highest < next_seq)


def expected_seq(response: httpx.Response) -> int | None:
    """On a 409 sequence gap, the seq the server expects; None for other 409s."""
    if response.status_code != 409 or PRODUCER_EXPECTED_SEQ not in response.headers:
        return None
    return int_header(response, PRODUCER_EXPECTED_SEQ) or 0


def refusal(response: httpx.Response, url: str) -> Exception:
    """What an answer no retry can change means."""
    if response.status_code == 409 and is_true(response.headers.get(STREAM_CLOSED)):
        return StreamClosedError(url)
    return http_error(response.status_code, url, response.text)

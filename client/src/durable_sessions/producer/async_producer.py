"""``AsyncIdempotentProducer``: exactly-once, batched, pipelined appends to one stream.

The TypeScript client's ``IdempotentProducer`` (``@durable-streams/client``)
in Python: ``append()`` is fire-and-forget; messages gather into a batch
until ``max_batch_bytes`` or ``linger_ms``; each batch is one POST carrying
``Producer-Id``, ``Producer-Epoch`` and ``Producer-Seq`` (one seq per batch),
and up to ``max_in_flight`` batches travel at once. The server keeps a
(producer, epoch, seq) once: a batch resent after a broken connection is
answered 204 and not stored again, and batches that overtake each other
are answered 409 and resent in order.

Written on httpx rather than the official Python client, whose appends
carry no producer headers. Where it goes beyond the TypeScript client, so
that no message is lost or doubled:

- broken connections, 408, 429 and 5xx are retried (same epoch and seq)
  under a `RetryPolicy`;
- a 204 for a batch that was never sent before means another session of
  this producer id already wrote this epoch (a process restarted with the
  same epoch): with ``auto_claim`` the producer claims a newer epoch and
  sends the batch there; otherwise it is a `StaleEpochError`. The
  TypeScript client would count the batch as delivered and lose it;
- on a stale epoch with ``auto_claim``, batches in flight are renumbered in
  the new epoch in their original order, not each claiming one of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from durable_sessions._http import auth_for
from durable_sessions.producer.answers import (
    duplicate_is_ours,
    expected_seq,
    int_header,
    refusal,
    server_epoch,
)
from durable_sessions.producer.batches import Batch, encode_message
from durable_sessions.producer.errors import (
    ProducerClosedError,
    ProducerFailedError,
    SequenceGapError,
    StaleEpochError,
)
from durable_sessions.producer.transport import ProducerTransport
from durable_sessions.protocol.content_types import is_json
from durable_sessions.protocol.headers import (
    CONTENT_TYPE,
    PRODUCER_EPOCH,
    PRODUCER_ID,
    PRODUCER_RECEIVED_SEQ,
    PRODUCER_SEQ,
    STREAM_CLOSED,
    STREAM_NEXT_OFFSET,
    TRUE,
)
from durable_sessions.tokens import token_provider

if TYPE_CHECKING:
    import ssl
    from collections.abc import Callable, Mapping

    import httpx

    from durable_sessions.producer.batches import RetryPolicy
    from durable_sessions.tokens import TokenSource

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class CloseResult:
    """What ``close()`` returns: the stream's final offset (its tail, now closed)."""

    final_offset: str


class _Fenced(Exception):
    """Internal: the batch must be resent in a newer epoch than ``server_epoch``."""

    def __init__(self, server_epoch: int) -> None:
        self.server_epoch = server_epoch


class AsyncIdempotentProducer:
    """An idempotent producer for exactly-once writes to the stream at ``url``.

    ``producer_id`` is stable for the writer (e.g. ``"order-service-1"``);
    ``epoch`` its session; ``auto_claim`` claims ``server epoch + 1`` when
    the server says ours is stale (a restarted process that keeps no epoch).
    ``content_type`` is the stream's (asked with a HEAD before the first
    batch when not given). ``headers`` go on every request; ``token`` is a
    bearer token source (`durable_sessions.tokens`); ``on_error`` is
    called with the error of each batch that fails for good. ``client`` is
    an httpx client to use (the producer makes its own otherwise, trusting
    ``verify``: an SSL context or False; by default the system's CAs and
    ``SSL_CERT_FILE``'s).

    ``append()`` needs a running event loop; call ``flush()`` (or ``close()``
    or ``detach()``) before the loop ends, or use ``async with``, which
    detaches on exit.
    """

    def __init__(
        self,
        url: str,
        producer_id: str,
        *,
        epoch: int = 0,
        auto_claim: bool = False,
        max_batch_bytes: int = MIB,
        linger_ms: float = 5,
        max_in_flight: int = 5,
        content_type: str | None = None,
        headers: Mapping[str, str] | None = None,
        token: TokenSource | None = None,
        on_error: Callable[[Exception], None] | None = None,
        retry: RetryPolicy | None = None,
        client: httpx.AsyncClient | None = None,
        verify: ssl.SSLContext | bool | None = None,
    ) -> None:
        if not producer_id:
            raise ValueError("producer_id must not be empty")
        if epoch < 0:
            raise ValueError("epoch must be >= 0")
        if max_batch_bytes <= 0:
            raise ValueError("max_batch_bytes must be > 0")
        if max_in_flight <= 0:
            raise ValueError("max_in_flight must be > 0")
        if linger_ms < 0:
            raise ValueError("linger_ms must be >= 0")
        self.url = url
        self.producer_id = producer_id
        self._epoch = epoch
        self._next_seq = 0
        self._auto_claim = auto_claim
        self._max_batch_bytes = max_batch_bytes
        self._linger_secs = linger_ms / 1000
        self._max_in_flight = max_in_flight
        self._on_error = on_error
        self._wire = ProducerTransport(
            url,
            headers=headers or {},
            auth=auth_for(token_provider(token)),
            retry=retry,
            content_type=content_type,
            client=client,
            connections=max_in_flight + 1,
            verify=verify,
        )
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._linger: asyncio.TimerHandle | None = None
        self._queue: deque[Batch] = deque()
        self._in_flight: list[Batch] = []
        # Fenced batches wait here until nothing is in flight, then go out renumbered.
        self._to_resend: list[Batch] = []
        self._fence_epoch = -1
        # With auto_claim, the first batch of an epoch goes alone: what it
        # claims decides the epoch of the rest.
        self._claimed = not auto_claim
        self._failure: Exception | None = None
        self._unreported: Exception | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._idle = asyncio.Event()
        self._idle.set()
        self._closed = False
        self._close_result: CloseResult | None = None
        self._final_message: bytes | None = None
        self._last_offset: str | None = None

    # -- the TypeScript client's surface ------------------------------------

    def append(self, body: Any) -> None:
        """Add a message to the current batch and return at once (fire-and-forget).

        ``body``: bytes; a ``str`` (UTF-8; for a JSON stream, one serialised
        JSON value); or any other value, serialised as JSON. Errors of the
        batch go to ``on_error`` and to the next ``flush()``.
        """
        if self._closed:
            raise ProducerClosedError()
        if self._failure is not None:
            raise ProducerFailedError() from self._failure
        # The hot path: a string or bytes goes in without a call.
        kind = type(body)
        data = body.encode() if kind is str else body if kind is bytes else encode_message(body)
        self._pending.append(data)
        self._pending_bytes += len(data)
        if self._pending_bytes >= self._max_batch_bytes:
            self._enqueue_pending()
        elif self._linger is None:
            self._linger = asyncio.get_running_loop().call_later(
                self._linger_secs, self._linger_expired
            )

    async def flush(self) -> None:
        """Send the current batch now and wait until every batch is answered.

        Raises the first error of a batch that failed since the last flush.
        """
        self._enqueue_pending()
        await self._idle.wait()
        error, self._unreported = self._unreported, None
        if error is not None:
            raise error

    async def detach(self) -> None:
        """Flush, then stop: the stream stays open (another producer may go on).

        Errors of the last batches are not raised (``on_error`` sees them);
        further ``append()`` calls raise `ProducerClosedError`.
        """
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):
            await self.flush()
        await self._release()

    async def close(self, final_message: Any = None) -> CloseResult:
        """Flush, then close the stream (EOF for readers), with ``final_message`` appended
        atomically when given.

        Idempotent: the close carries producer headers, so a retry (or a
        second call) is answered as a duplicate and returns the same result.
        """
        if self._close_result is not None:
            return self._close_result
        if not self._closed:
            self._closed = True
            self._final_message = None if final_message is None else encode_message(final_message)
        await self.flush()
        result = await self._send_close(self._final_message)
        self._close_result = result
        await self._release()
        return result

    async def restart(self) -> None:
        """Flush (ignoring failures), then start a new session: epoch + 1, seq 0.

        Clears a failure: messages of batches that failed are not resent.
        """
        with contextlib.suppress(Exception):
            await self.flush()
        self._failure = self._unreported = None
        self._epoch += 1
        self._next_seq = 0
        self._claimed = not self._auto_claim

    @property
    def epoch(self) -> int:
        """The current epoch."""
        return self._epoch

    @property
    def next_seq(self) -> int:
        """The sequence number the next batch to be sent will carry."""
        return self._next_seq

    @property
    def pending_count(self) -> int:
        """Messages in the batch being gathered."""
        return len(self._pending)

    @property
    def in_flight_count(self) -> int:
        """Batches sent or waiting to be sent, not yet answered."""
        return len(self._queue) + len(self._in_flight) + len(self._to_resend)

    @property
    def last_successful_offset(self) -> str | None:
        """The greatest offset a successful append (or the close) returned."""
        return self._last_offset

    async def __aenter__(self) -> AsyncIdempotentProducer:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.detach()

    # -- batching and pipelining --------------------------------------------

    def _linger_expired(self) -> None:
        self._linger = None
        self._enqueue_pending()

    def _enqueue_pending(self) -> None:
        if self._linger is not None:
            self._linger.cancel()
            self._linger = None
        if not self._pending:
            return
        batch = Batch(self._pending, self._pending_bytes)
        self._pending, self._pending_bytes = [], 0
        self._queue.append(batch)
        self._idle.clear()
        self._pump()

    def _pump(self) -> None:
        """Start queued batches, in order, while the window allows."""
        if self._to_resend:
            return
        limit = self._max_in_flight if self._claimed else 1
        while self._queue and len(self._in_flight) < limit:
            batch = self._queue.popleft()
            batch.epoch, batch.seq = self._epoch, self._next_seq
            batch.maybe_delivered = False
            batch.outcome = "pending"
            batch.settled = asyncio.Event()
            self._next_seq += 1
            self._in_flight.append(batch)
            task = asyncio.create_task(self._run(batch))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _run(self, batch: Batch) -> None:
        try:
            offset = await self._deliver(batch)
        except _Fenced as fenced:
            self._settle(batch, "resend")
            self._to_resend.append(batch)
            self._fence_epoch = max(self._fence_epoch, fenced.server_epoch)
        except Exception as exc:
            self._settle(batch, "failed")
            self._fail(exc)
        else:
            self._settle(batch, "ok")
            if offset and (self._last_offset is None or offset > self._last_offset):
                self._last_offset = offset
            self._claimed = True
        if self._to_resend and not self._in_flight:
            self._renumber()
        self._pump()
        self._check_idle()

    def _settle(self, batch: Batch, outcome: Any) -> None:
        batch.outcome = outcome
        batch.settled.set()
        self._in_flight.remove(batch)

    def _renumber(self) -> None:
        """Resend fenced batches in a new epoch, from seq 0, in their original order."""
        batches = sorted(self._to_resend, key=lambda b: (b.epoch, b.seq))
        self._to_resend = []
        self._epoch = max(self._epoch, self._fence_epoch + 1)
        self._fence_epoch = -1
        self._next_seq = 0
        self._claimed = False
        self._queue.extendleft(reversed(batches))

    def _fail(self, error: Exception) -> None:
        """A batch failed for good: so do the ones queued after it (they can't be sequenced)."""
        if self._failure is None:
            self._failure = error
            self._unreported = error
        dropped = len(self._queue)
        self._queue.clear()
        if self._on_error is not None:
            for _ in range(1 + dropped):
                self._on_error(error)

    def _check_idle(self) -> None:
        if not (self._queue or self._in_flight or self._to_resend):
            self._idle.set()

    # -- one batch on the wire ----------------------------------------------

    async def _deliver(self, batch: Batch) -> str:
        """POST ``batch`` until the server keeps it; the offset after it ("" for a duplicate)."""
        body = batch.body(is_json(await self._wire.content_type()))
        while True:
            headers = self._producer_headers(batch.epoch, batch.seq)
            response = await self._wire.post(body, headers, batch.mark_maybe_delivered)
            status = response.status_code
            if status == 200:
                return str(response.headers.get(STREAM_NEXT_OFFSET, ""))
            if status == 204:
                self._check_duplicate(batch, response)
                return ""
            if status == 403:
                raise self._stale(response, batch.epoch)
            expected = expected_seq(response)
            if expected is not None:
                await self._wait_for_predecessors(batch, expected, response)
                continue
            raise refusal(response, self.url)

    def _check_duplicate(self, batch: Batch, response: httpx.Response) -> None:
        """Accept a 204 that answers an earlier attempt; another session's is a fence."""
        if batch.epoch != self._epoch or duplicate_is_ours(batch, response, self._next_seq):
            return
        current = server_epoch(response, batch.epoch)
        if self._auto_claim:
            raise _Fenced(current)
        raise StaleEpochError(
            current,
            f"another session of producer {self.producer_id!r} already wrote seq {batch.seq} "
            f"of epoch {batch.epoch}: restart() or use a higher epoch (or auto_claim)",
        )

    def _stale(self, response: httpx.Response, epoch: int) -> Exception:
        current = server_epoch(response, epoch)
        return _Fenced(current) if self._auto_claim else StaleEpochError(current)

    async def _wait_for_predecessors(
        self, batch: Batch, expected: int, response: httpx.Response
    ) -> None:
        """409 sequence gap: batches sent before this one have not arrived yet; wait for them.

        Their outcome decides this batch's: resent with them, or failed with them.
        """
        if expected >= batch.seq:
            received = int_header(response, PRODUCER_RECEIVED_SEQ)
            raise SequenceGapError(expected, batch.seq if received is None else received)
        before = [b for b in self._in_flight if b.epoch == batch.epoch and b.seq < batch.seq]
        for earlier in before:
            await earlier.settled.wait()
            if earlier.outcome == "resend":
                raise _Fenced(self._fence_epoch)
            if earlier.outcome == "failed":
                raise ProducerFailedError() from self._failure

    async def _send_close(self, final: bytes | None) -> CloseResult:
        content_type = await self._wire.content_type()
        body = b"" if final is None else Batch([final], len(final)).body(is_json(content_type))
        while True:
            headers = {**self._producer_headers(self._epoch, self._next_seq), STREAM_CLOSED: TRUE}
            response = await self._wire.post(body, headers, lambda: None)
            if response.status_code in (200, 204):
                self._next_seq += 1
                offset = str(response.headers.get(STREAM_NEXT_OFFSET, ""))
                if offset and (self._last_offset is None or offset > self._last_offset):
                    self._last_offset = offset
                return CloseResult(final_offset=offset)
            if response.status_code != 403:
                raise refusal(response, self.url)
            error = self._stale(response, self._epoch)
            if not isinstance(error, _Fenced):
                raise error
            self._epoch, self._next_seq = error.server_epoch + 1, 0

    def _producer_headers(self, epoch: int, seq: int) -> dict[str, str]:
        return {
            **self._wire.headers,
            CONTENT_TYPE: self._wire.known_content_type(),
            PRODUCER_ID: self.producer_id,
            PRODUCER_EPOCH: str(epoch),
            PRODUCER_SEQ: str(seq),
        }

    async def _release(self) -> None:
        await self._wire.aclose()

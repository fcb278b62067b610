"""``IdempotentProducer``: the async producer for synchronous code, on a thread of its own.

The producer's batching, pipelining and retries need timers and concurrent
requests, which synchronous code does not have; so each
``IdempotentProducer`` runs an `AsyncIdempotentProducer` on an event
loop in a background thread. ``append()`` hands messages over through a
queue (one loop wake-up per burst, not per message); the other methods wait
for the loop to do their work. ``on_error`` is called on that thread.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import TYPE_CHECKING, Any, TypeVar

from durable_sessions._loop_thread import LoopThread
from durable_sessions.producer.async_producer import MIB, AsyncIdempotentProducer
from durable_sessions.producer.errors import ProducerClosedError, ProducerFailedError

if TYPE_CHECKING:
    import ssl
    from collections.abc import Callable, Coroutine, Mapping

    from durable_sessions.producer.async_producer import CloseResult
    from durable_sessions.producer.batches import RetryPolicy
    from durable_sessions.tokens import TokenSource

T = TypeVar("T")


class IdempotentProducer:
    """An idempotent producer for exactly-once writes, for synchronous code.

    The same arguments and behaviour as `AsyncIdempotentProducer`
    (except ``client``: the producer makes its own, trusting ``verify``);
    ``with`` detaches on exit.
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
        verify: ssl.SSLContext | bool | None = None,
    ) -> None:
        self._runner = LoopThread(f"producer {producer_id}")
        self._loop = self._runner.loop

        async def make() -> AsyncIdempotentProducer:
            return AsyncIdempotentProducer(
                url,
                producer_id,
                epoch=epoch,
                auto_claim=auto_claim,
                max_batch_bytes=max_batch_bytes,
                linger_ms=linger_ms,
                max_in_flight=max_in_flight,
                content_type=content_type,
                headers=headers,
                token=token,
                on_error=on_error,
                retry=retry,
                verify=verify,
            )

        try:
            self._producer = self._call(make())
        except BaseException:
            self._stop()
            raise
        self._inbox: deque[Any] = deque()
        self._inbox_lock = threading.Lock()
        self._drain_scheduled = False
        self._closed = False

    def append(self, body: Any) -> None:
        """Add a message to the current batch and return at once (fire-and-forget)."""
        if self._closed:
            raise ProducerClosedError()
        failure = self._producer._failure
        if failure is not None:
            raise ProducerFailedError() from failure
        self._inbox.append(body)
        with self._inbox_lock:
            if self._drain_scheduled:
                return
            self._drain_scheduled = True
        self._loop.call_soon_threadsafe(self._drain)

    def flush(self) -> None:
        """Send the current batch now and wait until every batch is answered."""
        self._call(self._then(self._producer.flush))

    def detach(self) -> None:
        """Flush, then stop without closing the stream."""
        if self._closed:
            return
        self._closed = True
        self._call(self._then(self._producer.detach))
        self._stop()

    def close(self, final_message: Any = None) -> CloseResult:
        """Flush, then close the stream, with ``final_message`` appended atomically; idempotent."""
        self._closed = True
        result = self._call(self._then(lambda: self._producer.close(final_message)))
        self._stop()
        return result

    def restart(self) -> None:
        """Flush (ignoring failures), then start a new session: epoch + 1, seq 0."""
        self._call(self._then(self._producer.restart))

    @property
    def epoch(self) -> int:
        """The current epoch."""
        return self._producer.epoch

    @property
    def next_seq(self) -> int:
        """The sequence number the next batch to be sent will carry."""
        return self._producer.next_seq

    @property
    def pending_count(self) -> int:
        """Messages not yet in a batch on its way."""
        return len(self._inbox) + self._producer.pending_count

    @property
    def in_flight_count(self) -> int:
        """Batches sent or waiting to be sent, not yet answered."""
        return self._producer.in_flight_count

    @property
    def last_successful_offset(self) -> str | None:
        """The greatest offset a successful append (or the close) returned."""
        return self._producer.last_successful_offset

    def __enter__(self) -> IdempotentProducer:
        return self

    def __exit__(self, *_: object) -> None:
        self.detach()

    # -- the loop thread ------------------------------------------------------

    def _drain(self) -> None:
        """On the loop: hand every queued message to the async producer, in order."""
        with self._inbox_lock:
            self._drain_scheduled = False
        inbox, producer = self._inbox, self._producer
        try:
            while inbox:
                producer.append(inbox.popleft())
        except (ProducerClosedError, ProducerFailedError):
            # Raced with a failure: the next flush() raises it.
            inbox.clear()

    def _then(self, action: Callable[[], Coroutine[Any, Any, T]]) -> Coroutine[Any, Any, T]:
        """``action()`` once the messages appended before it are in the producer."""

        async def run() -> T:
            self._drain()
            return await action()

        return run()

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return self._runner.run(coroutine)

    def _stop(self) -> None:
        self._runner.stop()

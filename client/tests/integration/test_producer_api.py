"""The producer's surface through Envoy: close, detach, restart, counters, epochs, errors."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from durable_sessions import (
    AsyncIdempotentProducer,
    IdempotentProducer,
    ProducerClosedError,
    StaleEpochError,
    StreamClosedError,
)

if TYPE_CHECKING:
    from sdk_stack import SdkStack


async def test_close_appends_the_final_message_and_is_idempotent(sdk_stack: SdkStack) -> None:
    url = sdk_stack.new_stream(sdk_stack.new_bucket())
    producer = AsyncIdempotentProducer(url, "p", token=sdk_stack.token)
    producer.append({"n": 1})
    assert producer.pending_count == 1
    first = await producer.close({"n": "end"})
    assert await producer.close() == first
    assert first.final_offset == producer.last_successful_offset
    assert sdk_stack.read_json(url) == [{"n": 1}, {"n": "end"}]
    with sdk_stack.client() as http:
        assert http.head(url).headers["Stream-Closed"] == "true"
    with pytest.raises(ProducerClosedError):
        producer.append({"n": 2})


async def test_appending_to_a_closed_stream_fails(sdk_stack: SdkStack) -> None:
    url = sdk_stack.new_stream(sdk_stack.new_bucket())
    await AsyncIdempotentProducer(url, "a", token=sdk_stack.token).close()
    errors: list[Exception] = []
    late = AsyncIdempotentProducer(url, "b", token=sdk_stack.token, on_error=errors.append)
    late.append({"n": 1})
    with pytest.raises(StreamClosedError):
        await late.flush()
    assert [type(e) for e in errors] == [StreamClosedError]
    await late.detach()


async def test_detach_leaves_the_stream_open_for_the_next_producer(sdk_stack: SdkStack) -> None:
    url = sdk_stack.new_stream(sdk_stack.new_bucket())
    async with AsyncIdempotentProducer(url, "p", token=sdk_stack.token) as first:
        first.append({"n": 1})
    assert first.in_flight_count == 0
    async with AsyncIdempotentProducer(url, "p", epoch=1, token=sdk_stack.token) as second:
        second.append({"n": 2})
    assert sdk_stack.read_json(url) == [{"n": 1}, {"n": 2}]


async def test_restart_starts_a_new_epoch(sdk_stack: SdkStack) -> None:
    url = sdk_stack.new_stream(sdk_stack.new_bucket())
    async with AsyncIdempotentProducer(url, "p", token=sdk_stack.token) as producer:
        producer.append({"n": 1})
        await producer.flush()
        assert (producer.epoch, producer.next_seq) == (0, 1)
        await producer.restart()
        assert (producer.epoch, producer.next_seq) == (1, 0)
        producer.append({"n": 2})
        await producer.flush()
        assert producer.next_seq == 1
    assert sdk_stack.read_json(url) == [{"n": 1}, {"n": 2}]


async def test_a_second_session_on_the_same_epoch_is_caught(sdk_stack: SdkStack) -> None:
    """A restarted process that reuses its epoch: its first batch would be a "duplicate".

    Without auto_claim that is an error, not a silent loss; with auto_claim
    the producer claims the next epoch and the batch is stored.
    """
    url = sdk_stack.new_stream(sdk_stack.new_bucket())
    async with AsyncIdempotentProducer(url, "p", token=sdk_stack.token) as before:
        before.append({"n": 1})
        before.append({"n": 2})
    again = AsyncIdempotentProducer(url, "p", token=sdk_stack.token)
    again.append({"n": 3})
    with pytest.raises(StaleEpochError):
        await again.flush()
    await again.detach()
    async with AsyncIdempotentProducer(url, "p", auto_claim=True, token=sdk_stack.token) as claim:
        claim.append({"n": 3})
        await claim.flush()
        assert claim.epoch == 1
    assert sdk_stack.read_json(url) == [{"n": 1}, {"n": 2}, {"n": 3}]


def test_the_sync_producer_mirrors_the_async_one(sdk_stack: SdkStack) -> None:
    url = sdk_stack.new_stream(sdk_stack.new_bucket())
    with IdempotentProducer(url, "p", token=sdk_stack.token, linger_ms=0) as producer:
        for n in range(100):
            producer.append({"n": n})
        producer.flush()
        assert producer.pending_count == producer.in_flight_count == 0
        assert producer.last_successful_offset is not None
        producer.restart()
        assert producer.epoch == 1
        producer.append("[1, 2]")  # a string is one serialised JSON value
    result = IdempotentProducer(url, "q", token=sdk_stack.token).close(b'{"n": "end"}')
    assert result.final_offset
    assert sdk_stack.read_json(url) == [{"n": n} for n in range(100)] + [[1, 2], {"n": "end"}]


async def test_byte_streams_get_the_bytes_back_to_back(sdk_stack: SdkStack) -> None:
    url = sdk_stack.new_stream(sdk_stack.new_bucket(), "application/octet-stream")
    async with AsyncIdempotentProducer(url, "p", token=sdk_stack.token) as producer:
        producer.append(b"ab")
        producer.append("cd")
    with sdk_stack.client() as http:
        assert http.get(url, params={"offset": "-1"}).content == b"abcd"

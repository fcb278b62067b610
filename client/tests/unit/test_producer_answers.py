"""What the server's answers mean to a producer, and how batches and retries are made."""

from __future__ import annotations

import httpx
import pytest
from durable_sessions.producer.answers import (
    duplicate_is_ours,
    expected_seq,
    refusal,
    server_epoch,
)
from durable_sessions.producer.batches import Backoff, Batch, RetryPolicy, encode_message
from durable_sessions.producer.errors import DeliveryTimeoutError, StreamClosedError
from durable_streams import DurableStreamError


def _answer(status: int, **headers: str) -> httpx.Response:
    return httpx.Response(status, headers={k.replace("_", "-"): v for k, v in headers.items()})


def _batch(seq: int, maybe_delivered: bool) -> Batch:
    batch = Batch([b"{}"], 2)
    batch.epoch, batch.seq, batch.maybe_delivered = 0, seq, maybe_delivered
    return batch


def test_a_duplicate_is_ours_only_after_an_attempt_of_unknown_outcome() -> None:
    echo = _answer(204, Producer_Epoch="0", Producer_Seq="3")
    assert duplicate_is_ours(_batch(3, True), echo, next_seq=4)
    # Never sent before: the (epoch, seq) was written by another session.
    assert not duplicate_is_ours(_batch(3, False), echo, next_seq=4)
    # The server has seqs we never sent: another session is on this epoch.
    assert not duplicate_is_ours(_batch(0, True), _answer(204, Producer_Seq="57"), next_seq=1)


def test_epochs_and_gaps_from_the_headers() -> None:
    assert server_epoch(_answer(403, Producer_Epoch="7"), ours=2) == 7
    assert server_epoch(_answer(403), ours=2) == 2
    assert expected_seq(_answer(409, Producer_Expected_Seq="4", Producer_Received_Seq="6")) == 4
    assert expected_seq(_answer(409, Stream_Closed="true")) is None
    with pytest.raises(DurableStreamError):
        server_epoch(_answer(403, Producer_Epoch="x"), ours=0)


def test_refusals() -> None:
    assert isinstance(refusal(_answer(409, Stream_Closed="true"), "u"), StreamClosedError)
    error = refusal(_answer(400), "u")
    assert isinstance(error, DurableStreamError)
    assert error.status == 400


def test_messages_and_bodies() -> None:
    assert encode_message(b"\x00") == b"\x00"
    assert encode_message("é") == "é".encode()
    assert encode_message({"a": [1, None]}) == b'{"a":[1,null]}'
    batch = Batch([b'{"a":1}', b"[2]"], 10)
    assert batch.body(json_mode=True) == b'[{"a":1},[2]]'
    assert batch.body(json_mode=False) == b'{"a":1}[2]'


def test_backoff_grows_then_gives_up() -> None:
    backoff = Backoff(RetryPolicy(initial_delay_secs=0.1, max_delay_secs=0.4))
    delays = [backoff.next_delay("x") for _ in range(5)]
    assert all(0.05 <= d <= 0.4 for d in delays)
    assert delays[-1] >= 0.2
    with pytest.raises(DeliveryTimeoutError):
        Backoff(RetryPolicy(give_up_after_secs=0)).next_delay("connection refused")

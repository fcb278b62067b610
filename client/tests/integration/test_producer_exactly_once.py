"""Idempotent producers through Envoy: every message exactly once, in order, whatever breaks.

Connections are cut part-way by a TCP proxy in front of the gateway (requests
cut short, responses lost after the server applied the batch); writer
processes are SIGKILLed mid-stream and restarted with ``auto_claim``. Both
producer variants, the same checks: the stream holds 0..N-1, once each, in order.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest
from connection_cutter import ConnectionCutter
from durable_sessions import (
    AsyncIdempotentProducer,
    IdempotentProducer,
    RetryPolicy,
    StaleEpochError,
)

if TYPE_CHECKING:
    from sdk_stack import SdkStack

WRITER = Path(__file__).with_name("producer_writer.py")
MESSAGES = 1500
VARIANTS = ["async", "sync"]
SEEDS = {"async": 1, "sync": 2}
# Small batches and a short linger: many requests, so many chances to be cut.
SMALL_BATCHES: dict[str, Any] = {"max_batch_bytes": 1024, "linger_ms": 1, "max_in_flight": 5}


def _data(messages: list[Any]) -> list[int]:
    return [m["n"] for m in messages if m.get("kind") == "data"]


def _through_cutter(url: str, cutter: ConnectionCutter) -> str:
    return cutter.url + urlsplit(url).path


async def _write(variant: str, url: str, token: str, count: int, **options: Any) -> int:
    """Append ``count`` data messages with the chosen variant; the epoch it ended in."""
    errors: list[Exception] = []
    if variant == "async":
        async with AsyncIdempotentProducer(
            url, "writer", token=token, on_error=errors.append, **options
        ) as producer:
            for n in range(count):
                producer.append({"kind": "data", "n": n})
            await producer.flush()
            epoch = producer.epoch
    else:
        with IdempotentProducer(
            url, "writer", token=token, on_error=errors.append, **options
        ) as producer:
            for n in range(count):
                producer.append({"kind": "data", "n": n})
            producer.flush()
            epoch = producer.epoch
    assert errors == []
    return epoch


@pytest.mark.parametrize("variant", VARIANTS)
async def test_exactly_once_through_cut_connections(sdk_stack: SdkStack, variant: str) -> None:
    url = sdk_stack.new_stream(sdk_stack.new_bucket())
    gateway_port = urlsplit(sdk_stack.url).port
    assert gateway_port is not None
    retry = RetryPolicy(initial_delay_secs=0.01, max_delay_secs=0.2)
    with ConnectionCutter(gateway_port, seed=SEEDS[variant]) as cutter:
        await _write(
            variant,
            _through_cutter(url, cutter),
            sdk_stack.token,
            MESSAGES,
            retry=retry,
            content_type="application/json",
            **{**SMALL_BATCHES, "max_batch_bytes": 256},
        )
    assert _data(sdk_stack.read_json(url)) == list(range(MESSAGES))
    # The faults did happen, both kinds: lost responses are the ones retries must not double.
    counts = (cutter.connections, cutter.request_cuts, cutter.response_cuts)
    assert cutter.response_cuts >= 5, counts
    assert cutter.request_cuts >= 5, counts


@pytest.mark.parametrize("variant", VARIANTS)
async def test_pipelined_batches_keep_their_order(sdk_stack: SdkStack, variant: str) -> None:
    url = sdk_stack.new_stream(sdk_stack.new_bucket())
    options = {**SMALL_BATCHES, "max_in_flight": 16, "max_batch_bytes": 256}
    await _write(variant, url, sdk_stack.token, 3000, **options)
    assert _data(sdk_stack.read_json(url)) == list(range(3000))


def _start_writer(
    stack: SdkStack, url: str, variant: str, producer_id: str
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            str(WRITER),
            *("--url", url),
            *("--token", stack.token),
            *("--producer-id", producer_id),
            *("--count", str(MESSAGES)),
            *("--variant", variant),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )


def _claimed(writer: subprocess.Popen[str]) -> tuple[int, int]:
    assert writer.stdout is not None
    line = writer.stdout.readline().strip()
    assert line.startswith("claimed "), line
    fields = dict(item.split("=") for item in line.removeprefix("claimed ").split())
    return int(fields["epoch"]), int(fields["resume"])


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_killed_writer_restarts_with_auto_claim(sdk_stack: SdkStack, variant: str) -> None:
    url = sdk_stack.new_stream(sdk_stack.new_bucket())
    producer_id = "writer-" + uuid.uuid4().hex[:6]
    epochs, resumes = [], []
    # Killed when the stream holds about a quarter, a half, three quarters of the data.
    for fraction in (0.25, 0.5, 0.75):
        writer = _start_writer(sdk_stack, url, variant, producer_id)
        epoch, resume = _claimed(writer)
        epochs.append(epoch)
        resumes.append(resume)
        deadline = time.monotonic() + 60
        while len(_data(sdk_stack.read_json(url))) < fraction * MESSAGES:
            assert writer.poll() is None, "the writer finished before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.02)
        writer.send_signal(signal.SIGKILL)
        writer.wait(10)
        assert writer.stdout is not None
        writer.stdout.close()
    writer = _start_writer(sdk_stack, url, variant, producer_id)
    epoch, resume = _claimed(writer)
    epochs.append(epoch)
    resumes.append(resume)
    assert writer.stdout is not None
    assert writer.stdout.readline().strip() == "done"
    assert writer.wait(30) == 0
    writer.stdout.close()
    messages = sdk_stack.read_json(url)
    assert _data(messages) == list(range(MESSAGES))
    # Each restart claimed a newer epoch than the one it fenced and resumed where the stream
    # stood; on a loaded machine a late kill may find every message written already, but
    # at least one restart resumed mid-way.
    assert epochs == sorted(set(epochs)), epochs
    assert resumes[0] == 0
    assert resumes[1:] == sorted(resumes[1:]), resumes
    assert all(0 < r <= MESSAGES for r in resumes[1:]), resumes
    assert any(0 < r < MESSAGES for r in resumes[1:]), resumes
    assert sum(1 for m in messages if m.get("kind") == "start") == 4


async def test_a_fenced_producer_without_auto_claim_stops(sdk_stack: SdkStack) -> None:
    url = sdk_stack.new_stream(sdk_stack.new_bucket())
    errors: list[Exception] = []
    async with AsyncIdempotentProducer(url, "p", epoch=3, token=sdk_stack.token) as newer:
        newer.append({"n": 0})
        await newer.flush()
    zombie = AsyncIdempotentProducer(
        url, "p", epoch=2, token=sdk_stack.token, on_error=errors.append
    )
    zombie.append({"n": 1})
    with pytest.raises(StaleEpochError) as stale:
        await zombie.flush()
    assert stale.value.current_epoch == 3
    assert len(errors) == 1
    await zombie.detach()
    assert sdk_stack.read_json(url) == [{"n": 0}]

"""The crash test's judge catches what it must: lost, duplicated, misplaced and torn appends."""

from __future__ import annotations

import pytest
from crash_checks import Verdict, judge
from crash_payloads import Garbage, byte_payload, json_body, json_messages, parse_bytes, parse_json
from crash_producers import Ack, Producer

SEED = 7


def _producer(acked: dict[int, int]) -> Producer:
    """A producer whose seqs were acknowledged (200) at the given next offsets."""
    producer = Producer("b0-p0", "/v1/stream/b0", SEED)
    for seq, next_offset in acked.items():
        size = producer.stored_size(seq)
        producer.acks[seq] = Ack(status=200, next_offset=next_offset, size=size, attempts=1)
    return producer


def _stream(seqs: list[int]) -> bytes:
    return b"".join(byte_payload(SEED, "b0-p0", seq) for seq in seqs)


def _ends(seqs: list[int]) -> dict[int, int]:
    ends, position = {}, 0
    for seq in seqs:
        position += len(byte_payload(SEED, "b0-p0", seq))
        ends[seq] = position
    return ends


def test_a_faithful_stream_passes() -> None:
    verdict = Verdict()
    judge("b0", parse_bytes(SEED, _stream([0, 1, 2]), 0), [_producer(_ends([0, 1, 2]))], verdict)
    assert verdict == Verdict()


def test_a_lost_append_is_counted() -> None:
    verdict = Verdict()
    judge("b0", parse_bytes(SEED, _stream([0, 1]), 0), [_producer(_ends([0, 1, 2]))], verdict)
    assert verdict.lost == 1
    assert "b0-p0#2 lost" in verdict.problems[0]


def test_a_duplicated_append_is_counted() -> None:
    ends = _ends([0, 1])
    verdict = Verdict()
    judge("b0", parse_bytes(SEED, _stream([0, 1, 1]), 0), [_producer(ends)], verdict)
    assert verdict.duplicated == 1


def test_an_append_away_from_its_acknowledged_offset_is_misplaced() -> None:
    ends = _ends([0, 1])
    ends[0] = ends[1]  # acknowledged with the tail of a later append
    verdict = Verdict()
    judge("b0", parse_bytes(SEED, _stream([0, 1]), 0), [_producer(ends)], verdict)
    assert verdict.misplaced == 1


def test_an_unacknowledged_record_is_reported() -> None:
    verdict = Verdict()
    judge("b0", parse_bytes(SEED, _stream([0, 1]), 0), [_producer(_ends([0]))], verdict)
    assert "unacknowledged b0-p0#1" in verdict.problems[0]


def test_a_torn_record_is_garbage_with_the_records_before_it() -> None:
    data = _stream([0, 1])
    with pytest.raises(Garbage) as caught:
        parse_bytes(SEED, data[:-1], 0)
    assert [record.seq for record in caught.value.records] == [0]


def test_a_json_batch_is_one_append_at_its_stored_size() -> None:
    batches = [json_messages(SEED, "json-p0", seq) for seq in range(3)]
    page = json_body([message for batch in batches for message in batch])
    records = parse_json(SEED, [page])
    assert [record.seq for record in records] == [0, 1, 2]
    assert records[-1].end == sum(len(message) for batch in batches for message in batch)


def test_a_partial_json_batch_is_garbage() -> None:
    batch = next(
        messages for seq in range(100) if len(messages := json_messages(SEED, "json-p0", seq)) > 1
    )
    with pytest.raises(Garbage):
        parse_json(SEED, [json_body(batch[:-1])])

"""Self-describing append payloads of the crash test, and parsing a stream back into them.

Every payload is a pure function of ``(seed, producer, seq)``, so the check
can regenerate what was sent instead of keeping it. A byte record is
``@{producer}:{seq}:{total:06d}|`` followed by random filler up to ``total``
bytes; a JSON append is a batch of one to three compact objects.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

import msgspec

LARGE = 64 * 1024
_HEADER_MAX = 64


@dataclass(frozen=True, slots=True)
class Record:
    """One append found in a stream: who sent it and where its bytes are."""

    producer: str
    seq: int
    start: int
    end: int


class Garbage(Exception):
    """Bytes that are not a well-formed, byte-exact record; ``records`` are those before."""

    def __init__(self, message: str, records: list[Record]) -> None:
        super().__init__(message)
        self.records = records


def byte_payload(seed: int, producer: str, seq: int) -> bytes:
    """The body of ``producer``'s append ``seq`` to a byte stream."""
    rng = random.Random(f"{seed}/{producer}/{seq}")
    roll = rng.random()
    if roll < 0.02:
        total = LARGE
    elif roll < 0.2:
        total = rng.randint(2048, 16384)
    else:
        total = rng.randint(48, 1024)
    header = f"@{producer}:{seq}:{total:06d}|".encode()
    return header + rng.randbytes(total - len(header))


def json_messages(seed: int, producer: str, seq: int) -> list[bytes]:
    """The messages of ``producer``'s append ``seq`` to a JSON stream, as stored."""
    rng = random.Random(f"{seed}/{producer}/{seq}")
    return [
        json.dumps(
            {"p": producer, "s": seq, "i": index, "pad": rng.randbytes(rng.randint(4, 200)).hex()},
            separators=(",", ":"),
        ).encode()
        for index in range(rng.randint(1, 3))
    ]


def json_body(messages: list[bytes]) -> bytes:
    """A POST body appending ``messages`` as one batch."""
    return b"[" + b",".join(messages) + b"]"


def parse_bytes(seed: int, data: bytes, base: int) -> list[Record]:
    """Split byte-stream content that starts at offset ``base`` into records.

    Raises Garbage at the first byte that does not start a record equal to
    the regenerated payload it names.
    """
    records: list[Record] = []
    position = 0
    while position < len(data):
        where = base + position
        try:
            producer, seq, total = _header(data, position)
        except ValueError as exc:
            raise Garbage(f"{exc} at offset {where}: {data[position:][:32]!r}", records) from None
        if data[position : position + total] != byte_payload(seed, producer, seq):
            raise Garbage(f"record {producer}#{seq} at {where} differs from what was sent", records)
        records.append(Record(producer, seq, where, where + total))
        position += total
    return records


def _header(data: bytes, position: int) -> tuple[str, int, int]:
    head = data[position : position + _HEADER_MAX]
    bar = head.find(b"|")
    if not head.startswith(b"@") or bar < 0:
        raise ValueError("no record header")
    try:
        producer, seq_text, total_text = head[1:bar].decode().split(":")
        seq, total = int(seq_text), int(total_text)
    except ValueError:
        raise ValueError("malformed record header") from None
    if total <= bar or position + total > len(data):
        raise ValueError("record overruns the stream")
    return producer, seq, total


def parse_json(seed: int, pages: list[bytes]) -> list[Record]:
    """Split the JSON arrays of a full read into appends (whole batches), with offsets.

    A JSON offset counts the stored bytes of each message. Raises Garbage
    when the messages do not regroup into the batches that were sent.
    """
    messages = [
        bytes(raw) for page in pages for raw in msgspec.json.decode(page, type=list[msgspec.Raw])
    ]
    records: list[Record] = []
    position = 0
    index = 0
    while index < len(messages):
        try:
            first = json.loads(messages[index])
            producer, seq = first["p"], first["s"]
        except (ValueError, KeyError, TypeError):
            found = messages[index][:60]
            raise Garbage(
                f"foreign JSON message at offset {position}: {found!r}", records
            ) from None
        batch = json_messages(seed, producer, seq)
        if messages[index : index + len(batch)] != batch:
            raise Garbage(
                f"batch {producer}#{seq} at {position} differs from what was sent", records
            )
        size = sum(len(message) for message in batch)
        records.append(Record(producer, seq, position, position + size))
        position += size
        index += len(batch)
    return records

"""Reading streams back after the crashes and judging them against the acknowledgements."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import msgspec
from crash_payloads import Garbage, parse_bytes, parse_json

if TYPE_CHECKING:
    import httpx
    from crash_payloads import Record
    from crash_producers import Producer


@dataclass(frozen=True, slots=True)
class Content:
    """A stream read completely: its bytes (byte streams) or its JSON pages."""

    data: bytes
    pages: list[bytes]
    tail: int


@dataclass(slots=True)
class Verdict:
    """What the check of one or more streams found."""

    lost: int = 0
    duplicated: int = 0
    misplaced: int = 0
    problems: list[str] = field(default_factory=list)


class ReadFailed(Exception):
    """A stream could not be read back completely."""


async def read_stream(http: httpx.AsyncClient, path: str, *, json: bool) -> Content:
    """Catch-up reads from the beginning, following Stream-Next-Offset to the tail."""
    offset = 0
    chunks: list[bytes] = []
    query = "-1"
    while True:
        response = await http.get(path, params={"offset": query})
        if response.status_code != 200:
            raise ReadFailed(f"GET {path}?offset={query}: {response.status_code}")
        next_offset = int(response.headers["Stream-Next-Offset"])
        size = _stored_size(response.content) if json else len(response.content)
        if next_offset != offset + size:
            raise ReadFailed(
                f"GET {path}?offset={query}: {size} bytes but Stream-Next-Offset {next_offset}"
            )
        chunks.append(response.content)
        offset = next_offset
        query = response.headers["Stream-Next-Offset"]
        if response.headers.get("Stream-Up-To-Date") == "true":
            return Content(data=b"" if json else b"".join(chunks), pages=chunks, tail=offset)


def _stored_size(page: bytes) -> int:
    return sum(len(raw) for raw in msgspec.json.decode(page, type=list[msgspec.Raw]))


def parse(seed: int, path: str, content: Content, *, json: bool, base: int = 0) -> list[Record]:
    """The stream's records from offset ``base`` on; Garbage is re-raised naming the stream."""
    try:
        if json:
            return parse_json(seed, content.pages)
        return parse_bytes(seed, content.data[base:], base)
    except Garbage as exc:
        raise Garbage(f"{path}: {exc}", exc.records) from None


def judge(path: str, records: list[Record], producers: list[Producer], verdict: Verdict) -> None:
    """Every acknowledged append once, in order, at its acknowledged offset; nothing else."""
    found: dict[tuple[str, int], list[Record]] = defaultdict(list)
    for record in records:
        found[(record.producer, record.seq)].append(record)
    owners = {producer.name: producer for producer in producers}
    for (name, seq), copies in found.items():
        owner = owners.get(name)
        if owner is None or seq not in owner.acks:
            verdict.problems.append(f"{path}: unacknowledged {name}#{seq} at {copies[0].start}")
        if len(copies) > 1:
            verdict.duplicated += len(copies) - 1
            starts = [copy.start for copy in copies]
            verdict.problems.append(f"{path}: {name}#{seq} appears {len(copies)} times at {starts}")
    for producer in producers:
        for seq, ack in sorted(producer.acks.items()):
            stored = found.get((producer.name, seq))
            if not stored:
                verdict.lost += 1
                verdict.problems.append(
                    f"{path}: {producer.name}#{seq} lost (acknowledged {ack.status} "
                    f"at {ack.next_offset} after {ack.attempts} attempt(s))"
                )
                continue
            _judge_offset(path, producer.name, seq, stored[0], ack.status, ack.next_offset, verdict)
        seqs = [record.seq for record in records if record.producer == producer.name]
        if seqs != sorted(seqs):
            verdict.problems.append(f"{path}: {producer.name} seqs out of order")


def _judge_offset(
    path: str, name: str, seq: int, record: Record, status: int, acked: int, verdict: Verdict
) -> None:
    if status == 200 and record.end != acked:
        verdict.misplaced += 1
        verdict.problems.append(
            f"{path}: {name}#{seq} acknowledged (200) ending at {acked} "
            f"but stored at [{record.start}, {record.end})"
        )
    if status == 204 and acked < record.end:
        # A duplicate's answer must cover the original write.
        verdict.misplaced += 1
        verdict.problems.append(
            f"{path}: {name}#{seq} duplicate (204) reported tail {acked} "
            f"but the original ends at {record.end}"
        )

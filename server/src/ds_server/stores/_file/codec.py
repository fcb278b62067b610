"""The msgpack payloads the file backend persists, and their mapping to ``StreamState``."""

from __future__ import annotations

import msgspec

from ds_server.stores._producers import ProducerState, accepted
from ds_server.stores._rules import StreamState
from ds_server.stores.base import Expiry, ProducerClaim, SnapshotInfo

# (producer_id, epoch, seq)
Claim = tuple[str, int, int]
# (offset, content_type, size, created_at)
Snapshot = tuple[int, str, int, float]
# Identifies one snapshot file: (inode, size, mtime in ns).
FileKey = tuple[int, int, int]


class StreamConfig(msgspec.Struct, array_like=True, frozen=True):
    """What a create fixes for a stream's life; the meta of its CREATE record."""

    path: str
    content_type: str
    created_at: float
    ttl_seconds: int | None = None
    expires_at: float | None = None
    fork_offset: int = 0
    forked_from: str | None = None
    forked_from_id: str | None = None
    fork_requested_offset: int | None = None
    fork_sub_offset: int = 0
    # A fork of a snapshotted source starts at the source's earliest offset.
    earliest_offset: int = 0


class AppendMeta(msgspec.Struct, array_like=True, frozen=True):
    """What guards an append and must be durable with its bytes; the meta of an APPEND record."""

    producer: Claim | None = None
    writer: str = ""
    stream_seq: str | None = None
    last_access: float = 0.0


class StateMeta(msgspec.Struct, array_like=True, frozen=True):
    """A metadata change; the meta of a STATE record."""

    soft_deleted: bool = False


class Checkpoint(msgspec.Struct, array_like=True, frozen=True):
    """A stream's state as of the end of a log record (``end_pos``, whose CRC is ``last_crc``)."""

    end_pos: int
    last_crc: int
    tail: int
    closed: bool = False
    closed_by: Claim | None = None
    producers: dict[str, tuple[int, int]] = {}
    writer_seqs: dict[str, str] = {}
    soft_deleted: bool = False
    # The log was fsynced up to ``end_pos`` when this was taken.
    synced: bool = False
    last_write: float = 0.0
    # Which file of the stream's log this describes (a rewrite starts a new one).
    generation: int = 0
    # The snapshot, cached with the key of the file that holds it.
    snapshot: Snapshot | None = None
    snapshot_key: FileKey | None = None


class Entry(msgspec.Struct, array_like=True, frozen=True):
    """One stream in the catalog: its configuration and a checkpoint of its log."""

    stream_id: str
    config: StreamConfig
    checkpoint: Checkpoint
    last_access: float


def config_of(state: StreamState) -> StreamConfig:
    return StreamConfig(
        path=state.path,
        content_type=state.content_type,
        created_at=state.created_at,
        ttl_seconds=state.expiry.ttl_seconds,
        expires_at=state.expiry.expires_at,
        fork_offset=state.fork_offset,
        forked_from=state.forked_from,
        forked_from_id=state.forked_from_id,
        fork_requested_offset=state.fork_requested_offset,
        fork_sub_offset=state.fork_sub_offset,
        earliest_offset=state.earliest_offset,
    )


def new_state(stream_id: str, config: StreamConfig) -> StreamState:
    """The state a CREATE record starts (before its own data and close flag)."""
    return StreamState(
        stream_id=stream_id,
        path=config.path,
        content_type=config.content_type,
        created_at=config.created_at,
        expiry=Expiry(ttl_seconds=config.ttl_seconds, expires_at=config.expires_at),
        last_access=config.created_at,
        tail=config.fork_offset,
        fork_offset=config.fork_offset,
        forked_from=config.forked_from,
        forked_from_id=config.forked_from_id,
        fork_requested_offset=config.fork_requested_offset,
        fork_sub_offset=config.fork_sub_offset,
        earliest_offset=config.earliest_offset,
    )


def claim_of(claim: ProducerClaim | None) -> Claim | None:
    return None if claim is None else (claim.producer_id, claim.epoch, claim.seq)


def producer_claim(claim: Claim | None) -> ProducerClaim | None:
    return None if claim is None else ProducerClaim(*claim)


def apply_append(state: StreamState, meta: AppendMeta, data_len: int, close: bool) -> None:
    """Replay one APPEND record onto a state, as the engine applied it when it was written."""
    state.tail += data_len
    claim = producer_claim(meta.producer)
    if claim is not None:
        state.producers[claim.producer_id] = accepted(claim)
    if meta.stream_seq is not None:
        state.writer_seqs[meta.writer] = meta.stream_seq
    if close:
        state.closed = True
        state.closed_by = claim
    if data_len:
        state.last_write = meta.last_access
    state.last_access = max(state.last_access, meta.last_access)


def snapshot_of(info: SnapshotInfo | None) -> Snapshot | None:
    return None if info is None else (info.offset, info.content_type, info.size, info.created_at)


def snapshot_info(snapshot: Snapshot | None) -> SnapshotInfo | None:
    return None if snapshot is None else SnapshotInfo(*snapshot)


def checkpoint_of(
    state: StreamState,
    end_pos: int,
    last_crc: int,
    *,
    synced: bool = False,
    generation: int = 0,
    snapshot_key: FileKey | None = None,
) -> Checkpoint:
    return Checkpoint(
        end_pos=end_pos,
        last_crc=last_crc,
        tail=state.tail,
        closed=state.closed,
        closed_by=claim_of(state.closed_by),
        producers={pid: (p.epoch, p.last_seq) for pid, p in state.producers.items()},
        writer_seqs=dict(state.writer_seqs),
        soft_deleted=state.soft_deleted,
        synced=synced,
        last_write=state.last_write,
        generation=generation,
        snapshot=snapshot_of(state.snapshot),
        snapshot_key=snapshot_key,
    )


def entry_of(state: StreamState, checkpoint: Checkpoint) -> Entry:
    return Entry(
        stream_id=state.stream_id,
        config=config_of(state),
        checkpoint=checkpoint,
        last_access=state.last_access,
    )


def restore(entry: Entry) -> StreamState:
    """The state a catalog entry's checkpoint describes (hot at start-up: one call per stream)."""
    config, checkpoint = entry.config, entry.checkpoint
    closed_by = checkpoint.closed_by
    return StreamState(
        stream_id=entry.stream_id,
        path=config.path,
        content_type=config.content_type,
        created_at=config.created_at,
        expiry=Expiry(ttl_seconds=config.ttl_seconds, expires_at=config.expires_at)
        if config.ttl_seconds is not None or config.expires_at is not None
        else _NO_EXPIRY,
        last_access=max(config.created_at, entry.last_access),
        tail=checkpoint.tail,
        fork_offset=config.fork_offset,
        forked_from=config.forked_from,
        forked_from_id=config.forked_from_id,
        fork_requested_offset=config.fork_requested_offset,
        fork_sub_offset=config.fork_sub_offset,
        closed=checkpoint.closed,
        closed_by=None if closed_by is None else ProducerClaim(*closed_by),
        producers={
            pid: ProducerState(epoch=epoch, last_seq=seq)
            for pid, (epoch, seq) in checkpoint.producers.items()
        }
        if checkpoint.producers
        else {},
        writer_seqs=dict(checkpoint.writer_seqs),
        soft_deleted=checkpoint.soft_deleted,
        earliest_offset=config.earliest_offset,
        last_write=checkpoint.last_write,
    )


_NO_EXPIRY = Expiry()
encoder = msgspec.msgpack.Encoder()
append_decoder = msgspec.msgpack.Decoder(AppendMeta)
config_decoder = msgspec.msgpack.Decoder(StreamConfig)
state_decoder = msgspec.msgpack.Decoder(StateMeta)
entry_decoder = msgspec.msgpack.Decoder(Entry)

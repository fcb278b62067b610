"""The one mapping of stream states to SQL rows that the SQLite and Postgres backends share."""

from __future__ import annotations

from decimal import Decimal

from ds_server.stores._producers import ProducerState
from ds_server.stores._rules import StreamState
from ds_server.stores._state_rows import (
    STREAM_COLUMNS,
    complete_states,
    stream_state,
    stream_values,
)
from ds_server.stores.base import Expiry, ProducerClaim, SnapshotInfo


def full_state() -> StreamState:
    """A state with every stored field set to something other than its default."""
    return StreamState(
        stream_id="s1",
        path="chat/a",
        content_type="application/json",
        created_at=1.5,
        expiry=Expiry(ttl_seconds=60, expires_at=None),
        last_access=2.5,
        tail=120,
        fork_offset=40,
        forked_from="chat/root",
        forked_from_id="s0",
        fork_requested_offset=2**70,  # beyond 64 bits: Postgres keeps it as numeric
        fork_sub_offset=3,
        closed=True,
        closed_by=ProducerClaim("p", 2, 9),
        soft_deleted=True,
        earliest_offset=50,
        last_write=3.5,
    )


def test_a_row_reads_back_as_the_state_it_was_written_from() -> None:
    state = full_state()
    values = stream_values(state)
    assert len(values) == len(STREAM_COLUMNS)
    assert stream_state(values) == state


def test_the_version_is_given_apart_from_the_shared_columns() -> None:
    state = stream_state(stream_values(full_state()), version=7)
    assert state.version == 7


def test_what_each_database_hands_back_is_normalised() -> None:
    # SQLite keeps booleans as integers; Postgres's numeric comes back as Decimal.
    row = list(stream_values(full_state()))
    row[STREAM_COLUMNS.index("closed")] = 1
    row[STREAM_COLUMNS.index("soft_deleted")] = 0
    row[STREAM_COLUMNS.index("fork_requested_offset")] = Decimal(2**70)
    state = stream_state(row)
    assert state.closed is True
    assert state.soft_deleted is False
    assert state.fork_requested_offset == 2**70
    assert type(state.fork_requested_offset) is int


def test_an_open_stream_has_no_closer() -> None:
    state = StreamState(
        stream_id="s2",
        path="p",
        content_type="text/plain",
        created_at=0.0,
        expiry=Expiry(),
        last_access=0.0,
        tail=0,
    )
    assert stream_state(stream_values(state)) == state


def test_producers_stream_seqs_and_snapshots_are_added_by_key() -> None:
    states = {10: full_state()}
    complete_states(
        states,
        producers=[(10, "p", 2, 9)],
        writer_seqs=[(10, "w", "0007")],
        snapshots=[(10, 50, "application/json", 12, 4.5)],
    )
    state = states[10]
    assert state.producers == {"p": ProducerState(epoch=2, last_seq=9)}
    assert state.writer_seqs == {"w": "0007"}
    assert state.snapshot == SnapshotInfo(50, "application/json", 12, 4.5)

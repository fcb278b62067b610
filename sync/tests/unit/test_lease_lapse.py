"""A lease renewed after its local deadline: the shard was ours all along, so what was set
aside meanwhile (wakes that started no reader, reads dropped) is read now."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ds_sync.metrics import Metrics
from ds_sync.options import Options, component_options
from ds_sync.sessions.leases import Lease, ShardLeases
from ds_sync.sessions.model import Status
from ds_sync.sessions.shards import shard_of
from ds_sync.sessions.stream_state import StreamState
from ds_sync.sessions.streams import Streams
from ds_sync.settings import Settings
from durable_sessions.protocol.listing import StreamInfo
from durable_sessions.protocol.subscriptions import Grant

SHARDS = 4
PATH = "b/quiet"


class _SlowRenewals:
    """Answers renewals after ``delay``, as a server on a busy machine does."""

    def __init__(self, delay: float) -> None:
        self.delay = delay

    async def renew(self, sub_id: str, grant: Grant) -> None:
        await asyncio.sleep(self.delay)


def _options() -> Options:
    return component_options(
        Settings(
            server_url="http://ds-server",
            postgres_url="postgresql://nowhere/db",
            streams="b/*",
            shards=SHARDS,
            lease_ttl_secs=1.0,
        )
    )


def _leases(api: Any, resumed: list[set[int]]) -> ShardLeases:
    return ShardLeases(
        _options().leases,
        api,
        pool=None,  # type: ignore[arg-type]  # renewals don't touch Postgres
        metrics=Metrics(),
        on_gained=lambda shards: None,
        on_lost=lambda shards: None,
        on_resumed=resumed.append,
    )


def _hold(leases: ShardLeases, shard: int, deadline: float) -> Lease:
    grant = Grant(wake_id="w", generation=1, token="t", streams=[])
    lease = Lease(grant, deadline, time.monotonic())
    leases.held[shard] = lease
    return lease


async def test_a_renewal_answered_after_the_local_deadline_resumes_the_shard() -> None:
    resumed: list[set[int]] = []
    leases = _leases(_SlowRenewals(delay=0.3), resumed)
    late = _hold(leases, 1, deadline=time.monotonic() + 0.1)
    _hold(leases, 2, deadline=time.monotonic() + 10.0)
    await leases._renew_all()
    assert resumed == [{1}]
    assert set(leases.held) == {1, 2}
    assert late.deadline > time.monotonic()
    assert leases.owns(PATH) == (shard_of(PATH, SHARDS) in {1, 2})


async def test_a_timely_renewal_resumes_nothing() -> None:
    resumed: list[set[int]] = []
    leases = _leases(_SlowRenewals(delay=0.0), resumed)
    _hold(leases, 0, deadline=time.monotonic() + 10.0)
    await leases._renew_all()
    assert resumed == []


class _Owner:
    """The shard of ``PATH`` held, its local deadline passed or not."""

    shards = SHARDS

    def __init__(self) -> None:
        self.lapsed = False

    def owns(self, path: str) -> bool:
        return not self.lapsed

    def shared(self) -> bool:
        return False


async def test_a_wake_seen_while_the_lease_lapsed_starts_a_reader_once_resumed() -> None:
    streams = Streams(_options().readers, None, None, None, Metrics())  # type: ignore[arg-type]
    owner = _Owner()
    streams.ownership = owner
    started: list[str] = []
    streams._start_reader = lambda state: started.append(state.path)  # type: ignore[method-assign]
    committed = "00000000000000000010"
    streams.load({})
    streams._states[PATH] = StreamState(PATH, Status.ACTIVE, committed, None)
    try:
        owner.lapsed = True
        assert not streams.observe(StreamInfo(path=PATH, content_type=None, tail=20))
        assert started == []
        owner.lapsed = False
        streams.shards_resumed({shard_of(PATH, SHARDS)})
        assert started == [PATH]
    finally:
        await streams.stop()


def test_reads_dropped_stay_known_as_unread() -> None:
    state = StreamState(PATH, Status.ACTIVE, "00000000000000000010", None)
    state.read_offset, state.read_closed = "00000000000000000030", True
    state.drop_reads()
    assert state.read_offset == "00000000000000000010"
    assert state.unread
    assert state.closed_seen

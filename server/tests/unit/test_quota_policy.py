"""DS_QUOTAS__* into each bucket's quota, and the charge that checks a write against it."""

from __future__ import annotations

import pytest
from ds_server.settings import SettingsError, load_settings
from ds_server.stores._quotas import Ledger, Quota, QuotaPolicy, Usage, bucket_of, quota_policy
from ds_server.stores.errors import PayloadTooLarge, QuotaExceeded


def test_quotas_default_to_none(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DS_QUOTAS__MAX_BYTES", "DS_QUOTAS__MAX_STREAMS", "DS_QUOTAS__BUCKETS"):
        monkeypatch.delenv(name, raising=False)
    policy = quota_policy(load_settings())
    assert policy.quota_of("chat") == Quota(None, None)


def test_a_bucket_of_its_own_inherits_what_it_leaves_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DS_QUOTAS__MAX_BYTES", "1000")
    monkeypatch.setenv("DS_QUOTAS__MAX_STREAMS", "10")
    monkeypatch.setenv(
        "DS_QUOTAS__BUCKETS",
        '{"chat": {"max_bytes": 5000}, "internal": {"max_bytes": 0, "max_streams": 0}}',
    )
    policy = quota_policy(load_settings())
    assert policy.quota_of("other") == Quota(1000, 10)
    assert policy.quota_of("chat") == Quota(5000, 10)
    assert policy.quota_of("internal") == Quota(None, None)


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ('{"a/b": {"max_bytes": 1}}', "'a/b' is not a bucket"),
        ('{"__ds": {"max_bytes": 1}}', "'__ds' is not a bucket"),
        ('{"chat": {"max_bytes": -1}}', "DS_QUOTAS__BUCKETS__CHAT__MAX_BYTES"),
        ('{"chat": {"max_byte": 1}}', "DS_QUOTAS__BUCKETS__CHAT__MAX_BYTE"),
    ],
)
def test_bad_bucket_quotas_are_named(
    monkeypatch: pytest.MonkeyPatch, value: str, named: str
) -> None:
    monkeypatch.setenv("DS_QUOTAS__BUCKETS", value)
    with pytest.raises(SettingsError, match=named):
        load_settings()


def test_a_stream_counts_in_its_first_segment_and_server_streams_in_none() -> None:
    assert bucket_of("chat/room-1") == "chat"
    assert bucket_of("chat/a/b") == "chat"
    assert bucket_of("solo") == "solo"
    assert bucket_of("__ds/wakes/x") is None


def test_a_charge_counts_or_raises_and_counts_nothing() -> None:
    usage = Usage("chat", Quota(max_bytes=100, max_streams=2), size=90, streams=1)
    usage.charge(10, streams=1)
    assert (usage.bytes, usage.streams) == (100, 2)
    with pytest.raises(QuotaExceeded, match="100 of 100 bytes used, this write needs 1 more"):
        usage.charge(1)
    with pytest.raises(QuotaExceeded, match="stream quota of 2 streams"):
        usage.charge(0, streams=1)
    with pytest.raises(PayloadTooLarge, match="whole storage quota of 100 bytes"):
        usage.charge(101)
    assert (usage.bytes, usage.streams) == (100, 2)
    # What frees room, or adds nothing, passes even over the quota.
    usage.charge(-30)
    usage.charge(0)
    usage.refund(10, streams=1)
    assert (usage.bytes, usage.streams) == (60, 1)


def test_a_ledger_forgets_a_bucket_that_stores_nothing() -> None:
    ledger = Ledger(QuotaPolicy())
    usage = ledger.of("chat/a")
    assert usage is not None
    assert ledger.of("chat/b") is usage
    usage.charge(10, streams=1)
    ledger.drop_if_empty(usage)
    assert ledger.usage == {"chat": usage}
    usage.refund(10, streams=1)
    ledger.drop_if_empty(usage)
    assert ledger.usage == {}
    assert ledger.of("__ds/wakes/x") is None

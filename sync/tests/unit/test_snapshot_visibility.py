"""Which decoded transactions the first sync's snapshot already holds."""

from __future__ import annotations

from ds_sync.mirror.snapshot import Visibility, parse_snapshot


def test_parse() -> None:
    assert parse_snapshot("100:105:101,103", "0/16") == Visibility(100, 105, [101, 103], "0/16")
    assert parse_snapshot("100:100:", "0/16").xip == []


def test_visible_committed_before_and_not_in_progress() -> None:
    snap = parse_snapshot("100:105:101,103", "0/16")
    assert snap.sees(99)
    assert snap.sees(102)
    assert not snap.sees(101)
    assert not snap.sees(105)
    assert not snap.sees(200)


def test_32_bit_xids_are_widened_next_to_the_snapshot() -> None:
    epoch = 1 << 32
    snap = Visibility(epoch + 10, epoch + 20, [epoch + 15], "0/16")
    assert snap.sees(12)
    assert not snap.sees(15)
    assert not snap.sees(25)
    # Just before the epoch wrapped: an old transaction, seen.
    assert snap.sees((1 << 32) - 5)


def test_it_applies_only_before_its_wal_position() -> None:
    snap = parse_snapshot("1:2:", "0/100")
    assert snap.applies_to(0xFF)
    assert not snap.applies_to(0x100)

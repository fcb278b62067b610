"""Per-message offsets of a read, from byte arithmetic on its bounds."""

from __future__ import annotations

from durable_sessions.sessions.offsets import message_offsets


def _o(n: int) -> str:
    return str(n).zfill(20)


def test_boundaries_are_sums_of_message_sizes() -> None:
    assert message_offsets(_o(10), [b"{}", b'{"a":1}'], _o(19)) == [
        (_o(10), _o(12)),
        (_o(12), _o(19)),
    ]
    assert message_offsets("-1", [b"[1]"], _o(3)) == [(_o(0), _o(3))]
    assert message_offsets(_o(5), [], _o(5)) == []


def test_without_arithmetic_only_the_end_is_known() -> None:
    unknown = [(None, None), (None, "9_9")]
    assert message_offsets("1_2", [b"{}", b"{}"], "9_9") == unknown
    assert message_offsets(_o(0), [b"{}", b"{}"], _o(5)) == [(None, None), (None, _o(5))]
    assert message_offsets(None, [b"{}"], _o(2)) == [(None, _o(2))]

"""Wake fencing and ack validation (pure rules of the wake state machine)."""

from __future__ import annotations

from typing import Any

import pytest
from ds_server.protocol.offsets import format_offset
from ds_server.subscriptions.errors import Fenced, InvalidAckOffset
from ds_server.subscriptions.fencing import (
    apply_acks,
    check_fence,
    pending,
    pick_trigger,
    validate_acks,
)
from ds_server.subscriptions.model import NOTHING_ACKED, Link, StreamState, Wake

WAKE = Wake(wake_id="w_1", generation=3, snapshot={"a": 10}, trigger="a", token="tok")


def _fence(wake: Wake | None = WAKE, **overrides: Any) -> Wake:
    request: dict[str, Any] = {
        "token": "tok",
        "token_generation": 3,
        "wake_id": "w_1",
        "generation": 3,
    }
    request.update(overrides)
    return check_fence(wake, **request)


def test_exact_match_passes() -> None:
    assert _fence() is WAKE


@pytest.mark.parametrize(
    "overrides",
    [
        {"token": "other"},
        {"token_generation": 2},
        {"generation": 2},
        {"generation": 4},
        {"wake_id": "w_2"},
    ],
)
def test_anything_stale_is_fenced(overrides: dict[str, Any]) -> None:
    with pytest.raises(Fenced):
        _fence(**overrides)


def test_no_outstanding_wake_is_fenced() -> None:
    with pytest.raises(Fenced):
        _fence(None)


def test_unclaimed_pull_wake_has_no_token_and_is_fenced() -> None:
    unclaimed = Wake(wake_id="w_1", generation=3, snapshot={}, trigger="a")
    with pytest.raises(Fenced):
        _fence(unclaimed)


def _links() -> dict[str, Link]:
    return {"a": Link(explicit=False, glob=True, acked=5), "b": Link(True, False, NOTHING_ACKED)}


def test_valid_acks_are_returned_not_applied() -> None:
    links = _links()
    accepted = validate_acks([("a", format_offset(8))], links, {"a": 10})
    assert accepted == {"a": 8}
    assert links["a"].acked == 5
    assert apply_acks(links, accepted) == ["a"]
    assert links["a"].acked == 8


def test_ack_may_repeat_the_acked_offset_and_reach_the_tail() -> None:
    accepted = validate_acks(
        [("a", format_offset(5)), ("b", format_offset(3))], _links(), {"a": 10, "b": 3}
    )
    assert accepted == {"a": 5, "b": 3}


@pytest.mark.parametrize(
    ("path", "offset"),
    [
        ("unlinked", format_offset(1)),  # not a member
        ("a", "-1"),  # the sentinel is not a position
        ("a", "7"),  # malformed
        ("a", format_offset(4)),  # regresses
        ("a", format_offset(11)),  # beyond the tail
        ("gone", format_offset(0)),  # stream does not exist
    ],
)
def test_bad_acks(path: str, offset: str) -> None:
    links = {**_links(), "gone": Link(True, False, 0)}
    with pytest.raises(InvalidAckOffset):
        validate_acks([("a", format_offset(6)), (path, offset)], links, {"a": 10, "gone": None})


def test_apply_never_moves_back() -> None:
    links = _links()
    assert apply_acks(links, {"a": 2, "missing": 9}) == []
    assert links["a"].acked == 5


def test_pending_and_trigger() -> None:
    states = [
        StreamState("a", "glob", 10, 10),  # fully acked
        StreamState("b", "glob", NOTHING_ACKED, 0),  # empty
        StreamState("c", "explicit", 0, None),  # absent
        StreamState("d", "glob", NOTHING_ACKED, 4),
        StreamState("e", "glob", 2, 4),
    ]
    assert [state.path for state in pending(states)] == ["d", "e"]
    assert pick_trigger(states, "e") == "e"
    assert pick_trigger(states, "a") == "d"
    assert pick_trigger(states, None) == "d"

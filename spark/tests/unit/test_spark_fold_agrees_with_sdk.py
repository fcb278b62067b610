"""ds-spark's snapshot fold and the Python SDK's session fold agree on any session.

Both implement sessions.md §6; the SDK's is the one applications use
(`durable_sessions.sessions.fold`, `SessionState`), ds-spark's the one its
snapshots are published with. Random sessions in both accepted shapes,
with every operation, odd values and messages that are no session events.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from ds_spark.snapshots.fold import State, apply_message
from durable_sessions.sessions import SessionState, fold
from hypothesis import given, settings
from hypothesis import strategies as st

OPERATIONS = ["set", "insert", "update", "remove", "delete", "append", "upsert", "Set", None]
TYPES = ["message", "chunk", "presence", "typing", "reaction", "note"]
KEYS = ["msg:1", "msg:2", "user:alice", "reaction:1:bob:+1", ""]

values = st.one_of(
    st.none(),
    st.integers(-2, 2),
    st.text(max_size=3),
    st.fixed_dictionaries(
        {},
        optional={
            "text": st.one_of(st.text(max_size=4), st.integers(0, 9), st.none()),
            "role": st.sampled_from(["user", "assistant", None]),
            "status": st.sampled_from(["online", "offline"]),
        },
    ),
)


@st.composite
def session_events(draw: st.DrawFn) -> Any:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.sampled_from(["text", 7, [1, 2], None]))
    if kind == 1:
        return {"headers": {"control": draw(st.sampled_from(["reset", "snapshot-start"]))}}
    message: dict[str, Any] = {
        "type": draw(st.sampled_from(TYPES)),
        "key": draw(st.sampled_from(KEYS)),
    }
    if draw(st.booleans()):
        message["value"] = draw(values)
    operation = draw(st.sampled_from(OPERATIONS))
    if draw(st.booleans()):
        message["headers"] = {"operation": operation, "timestamp": "2026-11-26T10:00:00Z"}
        if draw(st.integers(0, 5)) == 0:
            message["headers"]["type"] = draw(st.sampled_from(TYPES))
    else:
        message["operation"] = operation
    return message


@settings(max_examples=400, deadline=None)
@given(st.lists(session_events(), max_size=30))
def test_the_two_folds_agree(messages: list[Any]) -> None:
    spark: State = {}
    sdk: dict[str, dict[str, Any]] = {}
    session = SessionState()
    for message in messages:
        # Each fold gets its own copy: ds-spark's grows chunk text in place.
        apply_message(spark, copy.deepcopy(message))
        fold(sdk, message)
        session.apply(message)
    assert json.dumps(sdk, sort_keys=True) == json.dumps(spark, sort_keys=True)
    assert list(sdk) == list(spark)
    assert {t: list(entries) for t, entries in sdk.items()} == {
        t: list(entries) for t, entries in spark.items()
    }
    assert session.to_dict() == sdk

"""The State Protocol: messages, their materialisation, and a live follower."""

from __future__ import annotations

from durable_sessions.state.follower import StateBatch, StateFollower
from durable_sessions.state.materialized import MaterializedState
from durable_sessions.state.messages import (
    CONTROLS,
    OPERATIONS,
    Control,
    Message,
    Operation,
    StateMessageError,
    change,
    control,
)

__all__ = [
    "CONTROLS",
    "OPERATIONS",
    "Control",
    "MaterializedState",
    "Message",
    "Operation",
    "StateBatch",
    "StateFollower",
    "StateMessageError",
    "change",
    "control",
]

"""sessions.md §5 in one process with pandas: the benchmark's single-machine baseline.

Vectorised where pandas allows (group-bys, shifts, cumulative sums, an
as-of merge for the next answer); it holds every event in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np
import pandas as pd
from durable_sessions.sessions.fields import OPERATION_KINDS

from ds_spark.analytics.columns import DAILY_COLUMNS, SESSION_COLUMNS

if TYPE_CHECKING:
    from pathlib import Path

Check = Callable[[str, str], "pd.Series[bool]"]
_decoder = msgspec.json.Decoder()


def analytics(path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``session_analytics`` and ``daily_session_rollup`` of the events in a Parquet file."""
    events = pd.read_parquet(path)
    events = events[events["event_index"] >= 0]
    typed = events["type"].notna() & events["key"].notna()
    events["kind"] = events["operation"].map(OPERATION_KINDS).where(typed)
    events["type"] = events["type"].where(typed)
    values = [_value(payload) for payload in events["payload"]]
    events["role"] = [_text(value, "role") for value in values]
    events["status"] = [_text(value, "status") for value in values]
    events = events.sort_values(["stream", "offset", "event_index"], kind="stable")
    events["position"] = np.arange(len(events))

    grouped = events.groupby("stream")
    sessions = pd.DataFrame(
        {
            "events": grouped.size(),
            "first_event_at": grouped["event_time"].min(),
            "last_event_at": grouped["event_time"].max(),
        }
    )
    sessions["duration_s"] = (
        sessions["last_event_at"] - sessions["first_event_at"]
    ).dt.total_seconds()
    is_ = _is(events)
    presence_upsert = events[is_("presence", "upsert")]
    sessions["participants"] = presence_upsert.groupby("stream")["key"].nunique()
    sessions["user_messages"] = (
        events[is_("message", "upsert") & (events["role"] == "user")]
        .groupby("stream")["key"]
        .nunique()
    )
    assistant = (is_("message", "upsert") & (events["role"] == "assistant")) | is_(
        "chunk", "append"
    )
    sessions["assistant_messages"] = events[assistant].groupby("stream")["key"].nunique()
    sessions["chunks"] = events[is_("chunk", "append")].groupby("stream").size()

    presence = events[is_("presence", "upsert") | is_("presence", "delete")].copy()
    presence["online"] = (
        (presence["kind"] == "upsert") & (presence["status"] != "offline")
    ).astype(int)
    previous = presence.groupby(["stream", "key"])["online"].shift(fill_value=0)
    presence["count"] = (presence["online"] - previous).groupby(presence["stream"]).cumsum()
    sessions["peak_online"] = presence.groupby("stream")["count"].max()

    reactions = events[is_("reaction", "upsert") | is_("reaction", "delete")]
    last = reactions.groupby(["stream", "key"])["kind"].last()
    sessions["reactions"] = (last == "upsert").groupby(level="stream").sum()

    latencies = _latencies(events, is_)
    quantiles = latencies.groupby("stream")["latency_ms"].quantile([0.5, 0.95]).unstack()
    sessions["first_token_latency_p50_ms"] = quantiles.get(0.5)
    sessions["first_token_latency_p95_ms"] = quantiles.get(0.95)
    for column in (
        "participants",
        "user_messages",
        "assistant_messages",
        "chunks",
        "peak_online",
        "reactions",
    ):
        sessions[column] = sessions[column].fillna(0).astype("int64")
    sessions = sessions.reset_index().rename(columns={"stream": "session"})[list(SESSION_COLUMNS)]

    timed = sessions[sessions["first_event_at"].notna()].copy()
    timed["day"] = timed["first_event_at"].dt.tz_convert("UTC").dt.date
    days = timed.set_index("session")["day"]
    daily = timed.groupby("day").agg(sessions=("session", "size"), events=("events", "sum"))
    keyed = presence_upsert.assign(day=presence_upsert["stream"].map(days))
    daily["participants"] = keyed.groupby("day")["key"].nunique()
    latencies["day"] = latencies["stream"].map(days)
    day_quantiles = latencies.groupby("day")["latency_ms"].quantile([0.5, 0.95]).unstack()
    daily["first_token_latency_p50_ms"] = day_quantiles.get(0.5)
    daily["first_token_latency_p95_ms"] = day_quantiles.get(0.95)
    daily["participants"] = daily["participants"].fillna(0).astype("int64")
    return sessions, daily.reset_index()[list(DAILY_COLUMNS)]


def _latencies(events: pd.DataFrame, check: Check) -> pd.DataFrame:
    upserts = events[check("message", "upsert")]
    first = upserts.drop_duplicates(["stream", "key"], keep="first")
    asked = first[(first["role"] == "user") & first["event_time"].notna()]
    answers = events[
        (check("message", "upsert") | check("chunk", "append"))
        & (events["role"] == "assistant")
        & events["event_time"].notna()
    ]
    matched = pd.merge_asof(
        asked[["stream", "position", "event_time"]].sort_values("position"),
        answers[["stream", "position", "event_time"]]
        .rename(columns={"event_time": "answered_at"})
        .sort_values("position"),
        on="position",
        by="stream",
        direction="forward",
        allow_exact_matches=False,
    )
    matched = matched[matched["answered_at"].notna()]
    delta = (matched["answered_at"] - matched["event_time"]) / pd.Timedelta(milliseconds=1)
    return pd.DataFrame({"stream": matched["stream"], "latency_ms": delta.astype(float)})


def _is(events: pd.DataFrame) -> Check:
    def check(type_name: str, kind: str) -> pd.Series:
        return (events["type"] == type_name) & (events["kind"] == kind)

    return check


def _value(payload: str) -> Any:
    message = _decoder.decode(payload)
    return message.get("value") if isinstance(message, dict) else None


def _text(value: Any, name: str) -> str | None:
    text = value.get(name) if isinstance(value, dict) else None
    return text if isinstance(text, str) else None

"""Live reads from an offset: SSE sessions and long-poll rounds.

Long-poll rounds go through the official client (``durable_streams.astream``).
SSE is read here with httpx-sse because the official client cannot do what
following needs: it never reconnects when the server ends an SSE
connection, refuses binary (base64) SSE, and, when long-polling itself,
keeps polling a closed stream forever. So each long-poll round is one
``astream`` read up to the tail, and this module decides what comes next.
"""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING

import httpx
from durable_streams import astream
from httpx_sse import aconnect_sse

from ds_client._errors import http_error
from ds_client._json import split_arrays
from ds_client.events import Update

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping

JSON_TYPE = "application/json"
SSE_TYPE = "text/event-stream"
# Answers meaning "no SSE here" (a proxy or server without it): fall back to long-poll.
_NO_SSE_STATUSES = frozenset({400, 405, 406, 415, 501})


class SseUnavailableError(Exception):
    """The server (or something in front of it) does not serve SSE for this stream."""


def is_json(content_type: str) -> bool:
    return content_type.split(";", 1)[0].strip().lower() == JSON_TYPE


def _messages(payloads: list[bytes], content_type: str) -> list[bytes]:
    if is_json(content_type):
        return [message for payload in payloads for message in split_arrays(payload)]
    data = b"".join(payloads)
    return [data] if data else []


async def sse_session(
    http: httpx.AsyncClient,
    url: str,
    offset: str,
    *,
    content_type: str,
    headers: Mapping[str, str] | None = None,
) -> AsyncIterator[Update]:
    """One SSE connection from ``offset``: an update per control event, until it ends.

    Data events are held until their control event, so every update's
    ``next_offset`` is exact. A connection that drops mid-way loses only
    data not yet confirmed by a control event; the caller resumes from the
    last ``next_offset`` it got. Ends after the update that reports closure.
    """
    params = {"offset": offset, "live": "sse"}
    # aconnect_sse adds its headers to the dict it is given: give it a fresh one.
    async with aconnect_sse(http, "GET", url, params=params, headers=dict(headers or {})) as source:
        response = source.response
        media_type = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if response.status_code in _NO_SSE_STATUSES or (
            response.status_code == 200 and media_type != SSE_TYPE
        ):
            raise SseUnavailableError(f"HTTP {response.status_code}, {media_type or 'no type'}")
        if response.status_code != 200:
            body = (await response.aread()).decode("utf-8", "replace")
            raise http_error(response.status_code, url, body)
        encoded = response.headers.get("stream-sse-data-encoding", "").lower() == "base64"
        payloads: list[bytes] = []
        try:
            async for event in source.aiter_sse():
                if event.event == "data":
                    payloads.append(
                        base64.b64decode(event.data) if encoded else event.data.encode("utf-8")
                    )
                elif event.event == "control":
                    control = json.loads(event.data)
                    closed = bool(control.get("streamClosed"))
                    yield Update(
                        messages=_messages(payloads, content_type),
                        content_type=content_type,
                        next_offset=control["streamNextOffset"],
                        up_to_date=bool(control.get("upToDate")) or closed,
                        closed=closed,
                    )
                    payloads = []
                    if closed:
                        return
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.ReadTimeout):
            # The connection dropped or went quiet for longer than the client's read
            # timeout: the caller reconnects from the last confirmed offset.
            return


async def long_poll_round(
    http: httpx.AsyncClient,
    url: str,
    offset: str,
    *,
    content_type: str,
    headers: Mapping[str, str] | None = None,
) -> Update:
    """Read from ``offset`` to the tail, waiting up to the server's timeout for new data."""
    async with astream(
        url, offset=offset, live="long-poll", client=http, headers=dict(headers or {})
    ) as response:
        # Reads every page up to the tail and returns at the first up-to-date answer
        # (a 204 after the timeout, or the end of a closed stream) instead of polling on.
        body = await response.read_bytes()
        closed = response.headers.get("stream-closed", "").lower() == "true"
        return Update(
            messages=_messages([body], content_type),
            content_type=content_type,
            next_offset=response.offset,
            up_to_date=response.up_to_date,
            closed=closed,
        )

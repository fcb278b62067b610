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
from durable_streams import DurableStreamError, astream
from httpx_sse import aconnect_sse

from durable_sessions._errors import http_error
from durable_sessions._http import auth_for, bearer_of, with_bearer
from durable_sessions.events import Update
from durable_sessions.protocol.content_types import SSE, is_json, media_type
from durable_sessions.protocol.headers import STREAM_CLOSED, STREAM_SSE_DATA_ENCODING, is_true
from durable_sessions.protocol.json_mode import split_json_arrays

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Mapping

    from durable_sessions.tokens import TokenProvider

# Answers meaning "no SSE here" (a proxy or server without it): fall back to long-poll.
_NO_SSE_STATUSES = frozenset({400, 405, 406, 415, 501})


class SseUnavailableError(Exception):
    """The server (or something in front of it) does not serve SSE for this stream."""


def _messages(payloads: list[bytes], content_type: str) -> list[bytes]:
    if is_json(content_type):
        return [message for payload in payloads for message in split_json_arrays(payload)]
    data = b"".join(payloads)
    return [data] if data else []


async def sse_session(
    http: httpx.AsyncClient,
    url: str,
    offset: str,
    *,
    content_type: str,
    headers: Mapping[str, str] | None = None,
    token: TokenProvider | None = None,
) -> AsyncIterator[Update]:
    """One SSE connection from ``offset``: an update per control event, until it ends.

    Data events are held until their control event, so every update's
    ``next_offset`` is exact. A connection that drops mid-way loses only
    data not yet confirmed by a control event; the caller resumes from the
    last ``next_offset`` it got. Ends after the update that reports closure.
    """
    params = {"offset": offset, "live": "sse"}
    # aconnect_sse adds its headers to the dict it is given: give it a fresh one.
    async with aconnect_sse(
        http, "GET", url, params=params, headers=dict(headers or {}), auth=auth_for(token)
    ) as source:
        response = source.response
        answered = media_type(response.headers.get("content-type"))
        if response.status_code in _NO_SSE_STATUSES or (
            response.status_code == 200 and answered != SSE
        ):
            raise SseUnavailableError(f"HTTP {response.status_code}, {answered or 'no type'}")
        if response.status_code != 200:
            body = (await response.aread()).decode("utf-8", "replace")
            raise http_error(response.status_code, url, body)
        encoded = response.headers.get(STREAM_SSE_DATA_ENCODING, "").lower() == "base64"
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
    token: TokenProvider | None = None,
) -> Update:
    """Read from ``offset`` to the tail, waiting up to the server's timeout for new data.

    The official client takes headers, not an httpx ``auth``: on a 401 the
    round is tried once more with a refreshed token.
    """
    sent = await with_bearer(token, headers)
    try:
        return await _long_poll(http, url, offset, content_type=content_type, headers=sent)
    except DurableStreamError as exc:
        if exc.status != 401 or token is None:
            raise
    sent = await with_bearer(token, headers, refresh_of=bearer_of(sent))
    return await _long_poll(http, url, offset, content_type=content_type, headers=sent)


async def _long_poll(
    http: httpx.AsyncClient,
    url: str,
    offset: str,
    *,
    content_type: str,
    headers: dict[str, str],
) -> Update:
    official: dict[str, str | Callable[[], str]] = dict(headers)
    async with astream(
        url, offset=offset, live="long-poll", client=http, headers=official
    ) as response:
        # Reads every page up to the tail and returns at the first up-to-date answer
        # (a 204 after the timeout, or the end of a closed stream) instead of polling on.
        body = await response.read_bytes()
        # The official response's headers are a plain dict of lower-case names.
        closed = is_true(response.headers.get(STREAM_CLOSED.lower()))
        return Update(
            messages=_messages([body], content_type),
            content_type=content_type,
            next_offset=response.offset,
            up_to_date=response.up_to_date,
            closed=closed,
        )

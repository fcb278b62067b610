"""The Electric feed: a client of Electric's Shape API (``GET /v1/shape``) on httpx.

The shape is the whole table (``table``), with ``replica=full`` so updates
and deletes carry whole rows. The first sync reads from ``offset=-1``; then
``live=true`` long-polls carry the ``handle``, the last ``offset`` and the
``cursor``. Messages are collected until an ``up-to-date`` control message
and then handed over as one batch, whose position is the handle, the
offset and the ``electric-schema`` the values are read with. After a
restart the feed catches up from that offset (a non-live request first).

``409`` (``must-refetch``): the shape is gone (Electric restarted without
it, or rotated it). The feed drops its handle, takes the new one when
Electric names it, and syncs from ``offset=-1`` again; the mirror sends a
``reset`` first. Network errors, ``429`` and ``5xx`` are retried with
backoff; other statuses mean Electric refuses the shape (a missing table,
a wrong secret), and the table is refused with Electric's words.

Electric gives no commit time: ``headers.timestamp`` is when ds-sync read
the change. Its snapshot rows carry no transaction id.
"""

from __future__ import annotations

import asyncio
import logging
import time

import httpx
import msgspec

from ds_sync.backoff import Backoff
from ds_sync.mirror import shape_messages as sm
from ds_sync.mirror.decoding import rfc3339_us
from ds_sync.mirror.feed import ChangeFeed
from ds_sync.mirror.model import Control, FeedBatch, Item, TableRefused

log = logging.getLogger("ds_sync.mirror")

FEED = "electric"
SHAPE_PATH = "/v1/shape"
BEFORE_ALL = "-1"


class ElectricPosition(msgspec.Struct, frozen=True):
    """Where the shape log was read to: handle, offset, and the schema its values follow."""

    handle: str
    offset: str
    schema: sm.Schema
    feed: str = FEED


class MustRefetch(Exception):
    """Electric answered 409: the shape must be synced from scratch (maybe with a new handle)."""

    def __init__(self, handle: str | None) -> None:
        super().__init__(handle)
        self.handle = handle


class ElectricFeed(ChangeFeed):
    """One table's shape, followed with long-polls."""

    async def start(self, position: bytes | None) -> None:
        options = self.context.options
        assert options.electric_url is not None
        self._url = options.electric_url + SHAPE_PATH
        self._secret = options.electric_secret
        self._primary_key = self.context.shape.primary_key
        self._handle: str | None = None
        self._offset = BEFORE_ALL
        self._schema: sm.Schema = {}
        self._cursor: str | None = None
        self._live = False  # until caught up: a restart first reads what it missed
        stored = _decode(position)
        if stored is not None:
            self._handle, self._offset, self._schema = stored.handle, stored.offset, stored.schema
        self._delivered_offset = self._offset
        self.context.metrics.state = "streaming" if stored is not None else "snapshot"

    async def next_batch(self) -> FeedBatch:
        items: list[Item] = []
        in_snapshot = self._offset == BEFORE_ALL
        if in_snapshot:
            items.append(Control.SNAPSHOT_START)
        while True:
            try:
                response = await self._get()
            except MustRefetch as exc:
                self._refetch(exc.handle)
                items, in_snapshot = [Control.SNAPSHOT_START], True
                continue
            read_at = rfc3339_us(time.time_ns() // 1000)
            self._take_headers(response)  # the schema the body's values are read with
            up_to_date = False
            refetch = False
            for message in sm.parse_body(response.content):
                headers = message["headers"]
                control = headers.get("control")
                if control == "up-to-date":
                    up_to_date = True
                elif control == "must-refetch":
                    refetch = True
                    break
                elif control is None and "operation" in headers:
                    if in_snapshot and sm.is_logged(headers):
                        items.append(Control.SNAPSHOT_END)
                        in_snapshot = False
                    items += sm.changes(message, self._schema, self._primary_key, read_at)
            if refetch:
                self._refetch(response.headers.get(sm.HANDLE))
                items, in_snapshot = [Control.SNAPSHOT_START], True
                continue
            if not up_to_date:
                continue
            self._live = True
            if in_snapshot:
                items.append(Control.SNAPSHOT_END)
                in_snapshot = False
            if items or self._offset != self._delivered_offset:
                self._delivered_offset = self._offset
                return FeedBatch(tuple(items), self._position())

    def _refetch(self, handle: str | None) -> None:
        log.warning(
            "table %s: Electric says must-refetch (the shape %s is gone): syncing it again "
            "from scratch%s",
            self.context.table.text,
            self._handle,
            f" as shape {handle}" if handle else "",
        )
        self.context.metrics.resyncs += 1
        # Without a new handle, Electric's docs suggest the old one with a suffix: a cache
        # buster that the server ignores.
        self._handle = handle or (None if self._handle is None else f"{self._handle}-next")
        self._offset = BEFORE_ALL
        self._cursor = None
        self._live = False

    def _take_headers(self, response: httpx.Response) -> None:
        headers = response.headers
        self._handle = headers.get(sm.HANDLE, self._handle)
        offset = headers.get(sm.OFFSET)
        if offset is None:
            raise sm.ShapeFormatError("a 200 without electric-offset")
        self._offset = offset
        self._cursor = headers.get(sm.CURSOR, self._cursor)
        schema = headers.get(sm.SCHEMA)
        if schema is not None:
            self._schema = sm.parse_schema(schema)

    def _params(self) -> dict[str, str]:
        params = {"table": self.context.table.text, "offset": self._offset, "replica": "full"}
        if self._handle is not None:
            params["handle"] = self._handle
        if self._live:
            params["live"] = "true"
            if self._cursor is not None:
                params["cursor"] = self._cursor
        if self._secret is not None:
            params["secret"] = self._secret.get_secret_value()
        return params

    async def _get(self) -> httpx.Response:
        """One shape request, retried until Electric answers 200 (or 409: MustRefetch)."""
        backoff = Backoff(cap=5.0)
        while True:
            try:
                response = await self.context.http.get(self._url, params=self._params())
            except httpx.HTTPError as exc:
                await self._pause(backoff, f"{type(exc).__name__}: {exc}", None)
                continue
            status = response.status_code
            if status == 200:
                return response
            if status == 409:
                raise MustRefetch(response.headers.get(sm.HANDLE))
            if status in (408, 429) or status >= 500:
                await self._pause(backoff, f"HTTP {status}", response.headers.get("retry-after"))
                continue
            raise TableRefused(
                f"Electric refuses the shape of {self.context.table.text}: HTTP {status} "
                f"{response.text[:300]}"
            )

    async def _pause(self, backoff: Backoff, problem: str, retry_after: str | None) -> None:
        self.context.metrics.errors += 1
        delay = backoff.next_delay()
        if retry_after is not None and retry_after.isdigit():
            delay = max(delay, min(float(retry_after), 60.0))
        log.warning(
            "table %s: Electric at %s: %s; retrying in %.2fs",
            self.context.table.text,
            self._url,
            problem,
            delay,
        )
        await asyncio.sleep(delay)

    def _position(self) -> bytes:
        assert self._handle is not None
        return msgspec.json.encode(ElectricPosition(self._handle, self._offset, self._schema))


def _decode(position: bytes | None) -> ElectricPosition | None:
    if position is None:
        return None
    try:
        found = msgspec.json.decode(position, type=ElectricPosition)
    except msgspec.DecodeError:
        return None
    return found if found.feed == FEED else None

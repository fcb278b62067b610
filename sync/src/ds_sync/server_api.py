"""The ds-server requests ds-sync makes, other than reading streams: HEAD, listings, subscriptions.

Stream reads go through ``durable_sessions`` (``sse_reader``, ``follow``);
these are single request/response calls. The frequent ones (claims, acks,
the mirror's POSTs) go through the SDK's small HTTP/1.1 client
(``durable_sessions.http1``, a twentieth of httpx's CPU per call), the rest
through the shared httpx client. Unexpected answers raise ``ServerError``
with the status and body.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import msgspec

from ds_sync.model import StreamInfo
from ds_sync.offsets import position

if TYPE_CHECKING:
    import httpx
    from durable_sessions.http1 import Http1Client, Response
    from durable_sessions.tokens import TokenProvider

STREAM_PREFIX = "/v1/stream"
JSON = "application/json"
_LISTING_PAGE = 1000


class ServerError(Exception):
    """The server answered with a status the caller did not expect."""

    def __init__(self, what: str, status: int, body: str) -> None:
        super().__init__(f"{what}: HTTP {status} {body[:200]}")
        self.status = status
        self.code = _error_code(body)


class _Listed(msgspec.Struct):
    stream_id: str
    content_type: str
    tail_offset: int
    status: str = "Open"
    created_at_ms: int | None = None


class _Listing(msgspec.Struct):
    streams: list[_Listed]
    next_cursor: str | None = None
    has_more: bool = False


class ClaimedStream(msgspec.Struct):
    path: str
    tail_offset: str
    acked_offset: str = "-1"


class Grant(msgspec.Struct):
    """A claimed pull-wake: who we are to the server until we ack, and what's pending."""

    wake_id: str
    generation: int
    token: str
    streams: list[ClaimedStream]


@dataclass(frozen=True, slots=True)
class ServerApi:
    """Calls against one server (``base_url``), with its bearer token from ``token`` when
    there is one."""

    http: httpx.AsyncClient
    base_url: str
    token: TokenProvider | None
    # The calls made many times a second: claims, acks and the mirror's POSTs.
    lean: Http1Client

    @property
    def headers(self) -> dict[str, str]:
        """The server's token, as the provider has it now (a file is read again when it
        changes); every request to the server carries these, the stream readers' included."""
        if self.token is None:
            return {}
        return {"Authorization": f"Bearer {self.token.token()}"}

    def _expect(self, response: httpx.Response | Response, what: str, *statuses: int) -> None:
        if response.status_code == 401 and self.token is not None:
            # Refused: the provider reads its source again, so the retry sends what it holds.
            self.token.refresh(self.token.token())
        _expect(response, what, *statuses)

    def stream_url(self, path: str) -> str:
        return f"{self.base_url}{STREAM_PREFIX}/{quote(path)}"

    def bucket_stream_url(self, path: str) -> str:
        return f"{self.base_url}/ds/{quote(path)}"

    async def head(self, path: str) -> StreamInfo | None:
        """The stream's content type, tail, closure and snapshot; None when it does not exist."""
        response = await self.http.head(self.stream_url(path), headers=self.headers)
        if response.status_code == 404:
            return None
        self._expect(response, "HEAD " + path, 200)
        snapshot = response.headers.get("stream-snapshot-offset")
        return StreamInfo(
            path=path,
            content_type=response.headers.get("content-type"),
            tail=position(response.headers.get("stream-next-offset", "0")),
            closed=response.headers.get("stream-closed", "").lower() == "true",
            snapshot_offset=None if snapshot is None else position(snapshot),
        )

    async def list_bucket(self, bucket: str) -> list[StreamInfo] | None:
        """Every stream of ``bucket`` (all pages); None when the bucket does not exist."""
        found: list[StreamInfo] = []
        after: str | None = None
        while True:
            params: dict[str, str | int] = {"limit": _LISTING_PAGE}
            if after is not None:
                params["after"] = after
            url = f"{self.base_url}/ds/{quote(bucket)}/streams"
            response = await self.http.get(url, params=params, headers=self.headers)
            if response.status_code == 404:
                return None
            self._expect(response, f"list bucket {bucket}", 200)
            page = msgspec.json.decode(response.content, type=_Listing)
            found += [
                StreamInfo(
                    path=f"{bucket}/{item.stream_id}",
                    content_type=item.content_type,
                    tail=item.tail_offset,
                    closed=item.status == "Closed",
                    created_ms=item.created_at_ms,
                )
                for item in page.streams
            ]
            if not page.has_more or page.next_cursor is None:
                return found
            after = page.next_cursor

    async def ensure_bucket(self, bucket: str) -> None:
        response = await self.http.put(f"{self.base_url}/ds/{quote(bucket)}", headers=self.headers)
        if response.status_code != 409:  # 409: it exists already
            self._expect(response, f"create bucket {bucket}", 201, 200)

    async def ensure_json_stream(self, path: str) -> None:
        headers = {**self.headers, "Content-Type": JSON}
        response = await self.http.put(self.stream_url(path), headers=headers)
        self._expect(response, f"create stream {path}", 201, 200)

    async def put_subscription(self, sub_id: str, body: dict[str, Any]) -> bool:
        """Create (True) or confirm (False) a subscription; replace one configured otherwise."""
        url = self._subscription_url(sub_id)
        headers = {**self.headers, "Content-Type": JSON}
        content = msgspec.json.encode(body)
        response = await self.http.put(url, content=content, headers=headers)
        if response.status_code == 409:
            # An earlier ds-sync configured it differently: this configuration wins.
            await self.http.delete(url, headers=self.headers)
            response = await self.http.put(url, content=content, headers=headers)
        self._expect(response, f"subscription {sub_id}", 201, 200)
        return response.status_code == 201

    async def claim(self, sub_id: str, worker: str) -> Grant | None:
        """Lease the subscription's pending work; None when there is none (or another holds it)."""
        found = await self.claim_or_refusal(sub_id, worker)
        return found if isinstance(found, Grant) else None

    async def claim_or_refusal(self, sub_id: str, worker: str) -> Grant | str:
        """Lease the subscription's pending work, or the code of the 409 refusing it
        (``ALREADY_CLAIMED``: another worker holds it; ``NO_PENDING_WORK``: nothing to hold)."""
        headers = {**self.headers, "Content-Type": JSON}
        body = msgspec.json.encode({"worker": worker})
        response = await self.lean.request(
            "POST", self._subscription_url(sub_id) + "/claim", content=body, headers=headers
        )
        if response.status_code == 409:
            return _error_code(response.text) or "CONFLICT"
        self._expect(response, f"claim {sub_id}", 200)
        return msgspec.json.decode(response.content, type=Grant)

    async def renew(self, sub_id: str, grant: Grant) -> None:
        """Extend the claim's lease (an ack of nothing that does not end the wake)."""
        body = {"wake_id": grant.wake_id, "generation": grant.generation, "done": False}
        await self._settle(sub_id, grant, "ack", body)

    async def append_json(self, path: str, body: bytes) -> None:
        """Append ``body`` (a JSON array of messages) to a JSON stream."""
        headers = {**self.headers, "Content-Type": JSON}
        response = await self.lean.request(
            "POST", self.stream_url(path), content=body, headers=headers
        )
        self._expect(response, f"append to {path}", 200, 204)

    async def ack(self, sub_id: str, grant: Grant, acks: list[tuple[str, str]]) -> None:
        """Acknowledge ``(path, offset)`` pairs and end the wake."""
        body = {
            "wake_id": grant.wake_id,
            "generation": grant.generation,
            "acks": [{"stream": path, "offset": offset} for path, offset in acks],
            "done": True,
        }
        await self._settle(sub_id, grant, "ack", body)

    async def release(self, sub_id: str, grant: Grant) -> None:
        """Hand the wake back unacknowledged (the server announces it again)."""
        body = {"wake_id": grant.wake_id, "generation": grant.generation}
        await self._settle(sub_id, grant, "release", body)

    async def publish_snapshot(self, path: str, offset: str, body: bytes) -> None:
        """Publish ``body`` as bucket stream ``path``'s snapshot at ``offset`` (drops history)."""
        url = f"{self.bucket_stream_url(path)}/snapshot/{offset}"
        headers = {**self.headers, "Content-Type": JSON}
        response = await self.http.put(url, content=body, headers=headers)
        self._expect(response, f"snapshot {path}", 204)

    async def _settle(self, sub_id: str, grant: Grant, verb: str, body: dict[str, Any]) -> None:
        headers = {**self.headers, "Content-Type": JSON, "Authorization": f"Bearer {grant.token}"}
        url = f"{self._subscription_url(sub_id)}/{verb}"
        response = await self.lean.request(
            "POST", url, content=msgspec.json.encode(body), headers=headers
        )
        self._expect(response, f"{verb} {sub_id}", 200, 204)

    def _subscription_url(self, sub_id: str) -> str:
        return f"{self.base_url}{STREAM_PREFIX}/__ds/subscriptions/{quote(sub_id)}"


def _expect(response: httpx.Response | Response, what: str, *statuses: int) -> None:
    if response.status_code not in statuses:
        raise ServerError(what, response.status_code, response.text)


def _error_code(body: str) -> str | None:
    try:
        document = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return None
    error = document.get("error") if isinstance(document, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, str) else None

"""The answers of the transport's two endpoints, before any web framework shapes them."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

LOCATION = "Location"
CACHE_CONTROL = "Cache-Control"
EXPOSE_HEADERS = "Access-Control-Expose-Headers"


@dataclass(frozen=True, slots=True)
class ChatResponse:
    """A status, headers and a JSON body (None: no body, as for 204)."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] | None = None

    @property
    def content(self) -> bytes:
        """The body as bytes (empty without one)."""
        return b"" if self.body is None else json.dumps(self.body).encode()

    @property
    def media_type(self) -> str | None:
        """``application/json`` with a body, None without."""
        return None if self.body is None else "application/json"


def pointer(status: int, read_url: str, **more: Any) -> ChatResponse:
    """Where the browser reads the generation: ``Location`` and ``{"streamUrl": …}``."""
    headers = {LOCATION: read_url, CACHE_CONTROL: "no-store", EXPOSE_HEADERS: LOCATION}
    return ChatResponse(status, headers, {"streamUrl": read_url, **more})


NOTHING_IN_FLIGHT = ChatResponse(204, {CACHE_CONTROL: "no-store"})

"""The stack the viewer's browser tests run against, and their tokens."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ds_proxy.tokens import bucket_token

if TYPE_CHECKING:
    import httpx

BUCKET = "sessions"
# ds-server ends each SSE response this often, so every test sees the page reconnect.
SSE_RECONNECT_SECS = 2


@dataclass(frozen=True)
class ViewerStack:
    url: str
    admin: httpx.Client  # a client of the gateway with a token for every bucket

    def session(self, session_id: str) -> str:
        """Create the JSON-mode session stream ``session_id``; its /ds path."""
        path = f"/ds/{BUCKET}/{session_id}"
        created = self.admin.put(path, headers={"Content-Type": "application/json"})
        assert created.status_code == 201, created.text
        return path

    def append(self, path: str, *messages: object) -> str:
        """Append each message on its own (each a POST); the tail offset after the last."""
        offset = ""
        for message in messages:
            response = self.admin.post(path, json=message)
            assert response.status_code in (200, 204), response.text
            offset = response.headers["Stream-Next-Offset"]
        return offset


def user_token(sub: str) -> str:
    """A valid token for ``sub`` on the sessions bucket."""
    return bucket_token(sub, read=(BUCKET,), write=(BUCKET,))


def screenshot_target() -> Path | None:
    """Where to save the docs' screenshot (`make viewer-shot` sets it), or None."""
    target = os.environ.get("DS_VIEWER_SCREENSHOT")
    return Path(target) if target else None

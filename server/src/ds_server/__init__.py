"""ds-server: a Durable Streams protocol server on Litestar."""

from __future__ import annotations

from ds_server.app import create_app
from ds_server.settings import Settings

__all__ = ["Settings", "create_app"]

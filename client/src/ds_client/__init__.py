"""Client helpers for the /ds extensions: bootstrap a stream, then follow it live.

Built on the official ``durable-streams`` client, which serves the plain
reads and writes; what it lacks for following (SSE reconnects, binary SSE,
stopping at a closed stream, bootstrap) is here.
"""

from __future__ import annotations

from ds_client._live import sse_session
from ds_client.bootstrap import Bootstrap, BootstrapFormatError, bootstrap, parse_bootstrap
from ds_client.events import Bootstrapped, Event, Update
from ds_client.follow import LiveMode, follow
from ds_client.snapshots import publish_snapshot

__all__ = [
    "Bootstrap",
    "BootstrapFormatError",
    "Bootstrapped",
    "Event",
    "LiveMode",
    "Update",
    "bootstrap",
    "follow",
    "parse_bootstrap",
    "publish_snapshot",
    "sse_session",
]

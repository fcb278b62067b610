"""The file backend's parts: record framing, segment logs, catalog, index, group commit."""

from __future__ import annotations

from ds_server.stores._file.persistence import FilePersistence

__all__ = ["FilePersistence"]

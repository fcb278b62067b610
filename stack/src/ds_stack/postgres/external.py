"""A PostgreSQL server someone else runs (a URL): tests use it as they use one of their own."""

from __future__ import annotations

from urllib.parse import quote, unquote, urlsplit, urlunsplit

from ds_stack.postgres._admin import create_database, drop_database


class ExternalPostgres:
    """A running server reached by a ``postgresql://`` URL with a superuser (or a role that
    may create databases and replication slots); ``url(database)`` names another database."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("postgresql", "postgres") or not parts.hostname:
            raise ValueError(f"not a postgresql:// URL with a host: {url!r}")
        self._parts = parts
        self._own_database = unquote(parts.path.lstrip("/")) or "postgres"

    def url(self, database: str | None = None) -> str:
        """The URL of ``database``; None: the one the given URL names."""
        name = self._own_database if database is None else database
        return urlunsplit(self._parts._replace(path="/" + quote(name, safe="")))

    def create_database(self, name: str) -> str:
        """Create ``name`` (if missing) and return its URL."""
        create_database(self.url(), name)
        return self.url(name)

    def drop_database(self, name: str) -> None:
        drop_database(self.url(), name)

"""Errors that end a job with one clear line.

Spark runs DataSource code in Python worker processes and hands their
exceptions back wrapped in JVM stack traces. Each of these errors puts a
marker before its message, so the CLI can find the one line that says what
went wrong in whatever Spark wraps around it (:func:`one_line`).
"""

from __future__ import annotations

import re

MARKER = "ds-spark error: "
_MARKED = re.compile(re.escape(MARKER) + r"([^\n]*)")


class DsSparkError(Exception):
    """A failure the user can act on; its message is one line."""

    def __init__(self, message: str) -> None:
        super().__init__(MARKER + message)
        self.message = message


class ServerUnreachable(DsSparkError):
    """ds-server did not answer."""


class StreamError(DsSparkError):
    """A stream that cannot be read as a session stream (missing, not JSON, retention moved)."""


class JavaMissing(DsSparkError):
    """No Java runtime for Spark."""


class PostgresUnreachable(DsSparkError):
    """Postgres did not answer, or refused the credentials."""


class SnapshotError(DsSparkError):
    """A snapshot that could not be published or did not verify."""


def one_line(error: BaseException) -> str | None:
    """The message of the first ds-spark error inside ``error``'s text, if any."""
    match = _MARKED.search(str(error))
    return match.group(1).strip() if match else None

"""ds-server's logs: their format (text or JSON lines) and the per-request line.

- ``formats``: ``DS_LOG__FORMAT`` as a logging configuration;
- ``access``: the request hook that logs one line per request.
"""

from ds_server.logs.access import AccessLog
from ds_server.logs.formats import configure_logging

__all__ = ["AccessLog", "configure_logging"]

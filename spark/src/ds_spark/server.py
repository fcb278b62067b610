"""The ds-server the readers and the snapshot job talk to: the SDK's `StreamServer`,
its failures turned into ds-spark's one-line errors.

Executors open their own (the SDK is installed where ds-spark is: the
workspace's environment in local mode, the same wheels on a cluster).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from durable_sessions import DurableStreamError, RetentionGoneError
from durable_sessions.server import ServerUnreachableError, StreamServer

from ds_spark.errors import ServerUnreachable, StreamError

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ds_spark.tokens import Token


@contextlib.contextmanager
def stream_server(url: str, token: Token | None = None) -> Iterator[StreamServer]:
    """A `StreamServer` at ``url``; what fails inside the ``with`` fails as ds-spark's errors.

    A token file is read again when it changes, and after a 401 (ds_spark.tokens).
    """
    try:
        with StreamServer(url, token=token or None) as server:
            yield server
    except ServerUnreachableError as exc:
        raise ServerUnreachable(exc.message) from None
    except RetentionGoneError as exc:
        raise StreamError(f"{exc.message}, its history is in Postgres") from None
    except DurableStreamError as exc:
        raise StreamError(exc.message) from None

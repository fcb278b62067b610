"""The server's bearer token as the driver and the executors get it: a string or a file.

A token file (``DS_SPARK__TOKEN_FILE``, the sources' ``tokenFile`` option)
is read by whoever sends a request, through the SDK's ``FileToken``: again
whenever it changes, and after a 401 (the request is then sent once more).
So a job, or a streaming query, outlives the token it started with as long
as the file is renewed; on a cluster the file must be at the same path on
every executor (a mounted secret).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

TOKEN_OPTION = "token"
TOKEN_FILE_OPTION = "tokenFile"

Token = str | Path
"""A token itself, or the file that holds it."""


def token_options(token: Token | None) -> dict[str, str]:
    """The ``durable_streams`` source's options that carry ``token``."""
    if token is None:
        return {}
    if isinstance(token, Path):
        return {TOKEN_FILE_OPTION: str(token)}
    return {TOKEN_OPTION: token}


def token_of(options: Mapping[str, str]) -> Token | None:
    """The token the source's options carry (a file wins over a string)."""
    path = options.get(TOKEN_FILE_OPTION)
    if path:
        return Path(path)
    return options.get(TOKEN_OPTION) or None

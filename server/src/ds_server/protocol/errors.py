"""The error every malformed request becomes, wherever it is parsed."""

from __future__ import annotations


class BadRequest(Exception):
    """A request the protocol rejects with 400; the message is the short reason."""

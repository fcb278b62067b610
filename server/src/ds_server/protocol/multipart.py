"""RFC 2046 ``multipart/mixed`` framing for /bootstrap, written part by part.

The boundary is 128 random bits, fresh per response: a payload cannot
contain it except by chance, and nobody can craft one that does because
the boundary is unknown until the response is written.
"""

from __future__ import annotations

import secrets

_CRLF = b"\r\n"


def new_boundary() -> str:
    """A fresh boundary token (RFC 2046 bchars only)."""
    return "ds-bootstrap-" + secrets.token_hex(16)


def content_type(boundary: str) -> str:
    """The response Content-Type for a body framed with ``boundary``."""
    return f"multipart/mixed; boundary={boundary}"


def part(boundary: str, part_type: str, body: bytes) -> bytes:
    """One body part: delimiter, its Content-Type, a blank line, the bytes.

    The CRLF after the body belongs to the next delimiter (RFC 2046 5.1.1),
    so the part's content is exactly ``body``.
    """
    return b"".join(
        (
            b"--",
            boundary.encode("ascii"),
            _CRLF,
            b"Content-Type: ",
            part_type.encode("latin-1"),
            _CRLF,
            _CRLF,
            body,
            _CRLF,
        )
    )


def closing(boundary: str) -> bytes:
    """The close delimiter that ends the multipart body."""
    return b"--" + boundary.encode("ascii") + b"--" + _CRLF

from __future__ import annotations

import email.parser
import email.policy

from ds_server.protocol import multipart
from hypothesis import given
from hypothesis import strategies as st


def _parse(boundary: str, body: bytes) -> list[tuple[str, bytes]]:
    raw = f"Content-Type: {multipart.content_type(boundary)}\r\n\r\n".encode() + body
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(raw)
    assert message.is_multipart()
    return [
        (part.get_content_type(), part.get_payload(decode=True) or b"")
        for part in message.iter_parts()
    ]


def test_boundaries_are_fresh_and_valid_tokens() -> None:
    first, second = multipart.new_boundary(), multipart.new_boundary()
    assert first != second
    assert len(first) <= 70  # RFC 2046 limit
    assert all(c.isalnum() or c == "-" for c in first)


@given(st.lists(st.binary(max_size=200), max_size=6))
def test_email_parser_recovers_every_part_exactly(bodies: list[bytes]) -> None:
    boundary = multipart.new_boundary()
    framed = multipart.part(boundary, "application/octet-stream", b"")
    framed += b"".join(multipart.part(boundary, "application/json", body) for body in bodies)
    framed += multipart.closing(boundary)

    parts = _parse(boundary, framed)

    assert parts[0] == ("application/octet-stream", b"")
    assert [body for _, body in parts[1:]] == bodies
    assert {kind for kind, _ in parts[1:]} <= {"application/json"}

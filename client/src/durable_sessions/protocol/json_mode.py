"""JSON mode: splitting read bodies into their messages, byte for byte; batching appends.

A read of a JSON stream returns its messages wrapped in one array; a client
that reads several pages in a row gets several arrays back to back. Each
message is cut out of the body as the exact text the server sent (never
re-serialised), so bytes from a live read equal those /bootstrap returns.
"""

from __future__ import annotations

import json

_decoder = json.JSONDecoder()
_WHITESPACE = " \t\n\r"


class JsonFramingError(ValueError):
    """The body is not a sequence of JSON arrays."""


def split_json_arrays(body: bytes) -> list[bytes]:
    """The elements of every top-level JSON array in ``body``, each as its raw bytes."""
    text = body.decode("utf-8")
    messages: list[bytes] = []
    index = _skip(text, 0)
    while index < len(text):
        if text[index] != "[":
            raise JsonFramingError(f"expected '[' at {index}")
        index = _skip(text, index + 1)
        if index < len(text) and text[index] == "]":
            index = _skip(text, index + 1)
            continue
        while True:
            try:
                _, end = _decoder.raw_decode(text, index)
            except json.JSONDecodeError as exc:
                raise JsonFramingError(str(exc)) from None
            messages.append(text[index:end].encode("utf-8"))
            index = _skip(text, end)
            if index >= len(text):
                raise JsonFramingError("unterminated array")
            if text[index] == "]":
                index = _skip(text, index + 1)
                break
            if text[index] != ",":
                raise JsonFramingError(f"expected ',' or ']' at {index}")
            index = _skip(text, index + 1)
    return messages


def _skip(text: str, index: int) -> int:
    while index < len(text) and text[index] in _WHITESPACE:
        index += 1
    return index


def json_batch(messages: list[bytes]) -> bytes:
    """One append body holding ``messages`` (each one JSON value's bytes) as a JSON array.

    The server flattens one array level: each element is stored as a message.
    """
    return b"[" + b",".join(messages) + b"]"

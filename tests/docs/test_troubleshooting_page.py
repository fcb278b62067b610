"""Every message docs/run/troubleshooting.md quotes is one the code still produces.

A quoted message is a ``text`` block; ``…`` stands for what varies. Each
literal piece of it must appear in the code (for Envoy's own answers, in the
tests that assert them), so a reworded error fails here, not a reader.
"""

from __future__ import annotations

import re

from doc_blocks import page_blocks
from doc_facts import code_text

PAGE = "run/troubleshooting.md"


def quoted_messages() -> list[str]:
    return [b.code.strip() for b in page_blocks(PAGE) if b.language == "text"]


def pieces(message: str) -> list[str]:
    """The literal phrases of a message, as the code may spell them across f-string parts.

    Split at `…` and at punctuation (where the code may end one literal and
    start the next, or put a value); phrases of two words or more are checked.
    """
    message = re.sub(r"^(ds-dev|ds-server|ds-sync): (error: )?", "", message)
    phrases = re.split(r"…|[;:()'`{}]|\.\s|=", message)
    return [p.strip() for p in phrases if len(p.strip().split()) >= 2]


def joined_code() -> str:
    """The code with implicitly concatenated string literals joined (`"a " "b"` is `"a b"`)."""
    return re.sub(r"\"\s*\n\s*f?\"", "", code_text())


def test_every_quoted_message_is_in_the_code() -> None:
    messages = quoted_messages()
    assert len(messages) >= 12
    code = joined_code()
    missing = [(m, p) for m in messages for p in pieces(m) if not in_code(p, code)]
    assert missing == []


def in_code(phrase: str, code: str) -> bool:
    """In the code as it is, or as two literals around one value (`f"Stop it{other}"`)."""
    if phrase in code:
        return True
    words = phrase.split(" ")
    return any(
        " ".join(words[:cut]) in code and " ".join(words[cut:]) in code
        for cut in range(1, len(words))
    )


def test_a_reworded_message_is_caught() -> None:
    code = 'raise X("bucket not found")\nf"{taken}; is another run? Stop it{other}"'
    assert in_code("bucket not found", code)
    assert in_code("Stop it or choose another", 'f"Stop it{x}" y = " or choose another"')
    assert not in_code("bucket does not exist", code)

"""What the official transport POSTs, parsed; what it must not be able to name."""

from __future__ import annotations

import json

import pytest
from durable_sessions.aisdk import BadChatRequest, ChatRequest, check_chat_id

# As createDurableChatTransport's sendMessages sends it, with a `body` option of {"model": "x"}.
SENT = {
    "model": "x",
    "id": "chat-1",
    "messages": [
        {"id": "m1", "role": "user", "parts": [{"type": "text", "text": "Hi "}]},
        {"id": "m2", "role": "assistant", "parts": [{"type": "text", "text": "Hello"}]},
        {
            "id": "m3",
            "role": "user",
            "parts": [
                {"type": "text", "text": "What is "},
                {"type": "file", "url": "x"},
                {"type": "text", "text": "a stream?"},
            ],
        },
    ],
    "trigger": "submit-message",
    "messageId": None,
}


def test_the_transports_body_is_read() -> None:
    chat = ChatRequest.from_json(json.dumps(SENT).encode())
    assert (chat.id, chat.trigger, chat.message_id, chat.extra) == (
        "chat-1",
        "submit-message",
        None,
        {"model": "x"},
    )
    assert chat.last_user_text() == "What is a stream?"
    assert ChatRequest.from_json({"id": "c", "messages": []}).last_user_text() == ""


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"{", "not JSON"),
        (b"[]", "JSON object"),
        ({"id": "c"}, "messages"),
        ({"id": "c", "messages": [1]}, "messages"),
        ({"id": "c", "messages": [], "trigger": 1}, "trigger"),
        ({"id": "c", "messages": [], "messageId": 1}, "messageId"),
        ({"messages": []}, "chat id"),
        ({"id": "../x", "messages": []}, "chat id"),
    ],
)
def test_anything_else_is_a_bad_request(body: object, reason: str) -> None:
    with pytest.raises(BadChatRequest, match=reason):
        ChatRequest.from_json(body)


@pytest.mark.parametrize("chat_id", ["a", "Chat_1.x~y-z", "0" * 200])
def test_chat_ids_that_name_a_stream_segment(chat_id: str) -> None:
    assert check_chat_id(chat_id) == chat_id


@pytest.mark.parametrize("chat_id", ["", "a/b", "..", ".x", "__ds", "a b", "0" * 201, 7, "é"])
def test_chat_ids_that_could_name_anything_else_are_refused(chat_id: object) -> None:
    with pytest.raises(BadChatRequest):
        check_chat_id(chat_id)

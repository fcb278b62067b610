"""What ``createDurableChatTransport`` POSTs: ``{...body, id, messages, trigger, messageId}``."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

# A chat id becomes one segment of a stream name: letters, digits and ._~- only.
_CHAT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._~-]{0,199}", re.ASCII)


class BadChatRequest(ValueError):
    """The request is not one the transport sends (answered 400 with this reason)."""


def check_chat_id(chat_id: object) -> str:
    """``chat_id`` if it can name a stream segment, else `BadChatRequest`."""
    if not isinstance(chat_id, str) or _CHAT_ID.fullmatch(chat_id) is None:
        raise BadChatRequest(
            "a chat id is 1 to 200 letters, digits, '.', '_', '~' or '-', starting with "
            "a letter or digit"
        )
    return chat_id


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One ``sendMessages`` call: the chat, its messages (AI SDK ``UIMessage`` dicts), what
    triggered it (``submit-message`` or ``regenerate-message``), and everything the
    client's ``body`` option added (``extra``)."""

    id: str
    messages: list[dict[str, Any]]
    trigger: str | None = None
    message_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, body: bytes | str | Any) -> ChatRequest:
        """Parse a request body (bytes or text of JSON, or the decoded object)."""
        if isinstance(body, (bytes, str)):
            try:
                body = json.loads(body)
            except ValueError:
                raise BadChatRequest("the body is not JSON") from None
        if not isinstance(body, dict):
            raise BadChatRequest("the body is a JSON object")
        messages = body.get("messages")
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            raise BadChatRequest("messages is a list of objects")
        trigger, message_id = body.get("trigger"), body.get("messageId")
        if trigger is not None and not isinstance(trigger, str):
            raise BadChatRequest("trigger is a string")
        if message_id is not None and not isinstance(message_id, str):
            raise BadChatRequest("messageId is a string")
        extra = {
            k: v for k, v in body.items() if k not in ("id", "messages", "trigger", "messageId")
        }
        return cls(check_chat_id(body.get("id")), messages, trigger, message_id, extra)

    def last_user_text(self) -> str:
        """The text parts of the last user message, joined ("" when there is none)."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                parts = message.get("parts")
                return "".join(
                    part["text"]
                    for part in (parts if isinstance(parts, list) else [])
                    if isinstance(part, dict)
                    and part.get("type") == "text"
                    and isinstance(part.get("text"), str)
                )
        return ""

"""The official createDurableChatTransport drives the example backend, unchanged.

A real Envoy and ds-server, the example app as a real process, and the
official ``@durable-streams/aisdk-transport`` in Node (the repository's tests/node): every
chunk of a generation arrives; on ``reconnectToStream`` mid-generation,
every chunk arrives again from the start; the AI SDK's ``readUIMessageStream``
makes the reply of them. The conversation is a session too.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from chat_example.model import reply_to, ui_chunks
from durable_sessions.sessions import load_session, session_url
from gateway_stack import ADMIN

if TYPE_CHECKING:
    from conftest import ChatApp

JUDGE = Path(__file__).resolve().parents[3] / "tests" / "node" / "chat-judge.mjs"
# A backstop only: each run ends as soon as the transport has read its streams.
JUDGE_SECS = 120


def judge(chat_app: ChatApp, chat: str, text: str, *more: str) -> subprocess.Popen[str]:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is missing: `make setup` needs Node for the official TypeScript packages")
    command = [node, str(JUDGE), "--api", f"{chat_app.url}/api/chat", "--chat", chat]
    process = subprocess.Popen(
        [*command, "--text", text, *more],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    watchdog = threading.Timer(JUDGE_SECS, process.kill)
    watchdog.daemon = True
    watchdog.start()
    return process


def next_line(process: subprocess.Popen[str]) -> dict[str, Any]:
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line:
        assert process.stderr is not None
        raise AssertionError(f"the judge ended: {process.wait()} {process.stderr.read()}")
    return json.loads(line)  # type: ignore[no-any-return]


def finish(process: subprocess.Popen[str]) -> int:
    """Wait for the judge to exit; its status."""
    _, errors = process.communicate()
    assert not errors, errors
    return process.returncode


def expected_chunks(text: str, received: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the fake model sends for ``text`` (its message id is a fresh one per generation)."""
    message_id = received[0].get("messageId", "")
    assert isinstance(message_id, str)
    assert message_id.startswith("msg-")
    return ui_chunks(reply_to(text), message_id=message_id)


def test_every_chunk_of_a_generation_arrives(chat_app: ChatApp) -> None:
    chat, text = f"chat-{uuid.uuid4().hex[:8]}", "What is a durable stream?"
    process = judge(chat_app, chat, text, "--mode", "whole")
    result = next_line(process)
    assert finish(process) == 0
    assert result["chunks"] == expected_chunks(text, result["chunks"])
    assert result["text"] == reply_to(text)


async def test_a_reload_mid_generation_reads_it_again_from_the_start(chat_app: ChatApp) -> None:
    chat, text = f"chat-{uuid.uuid4().hex[:8]}", "Does it survive a reload?"
    chat_app.hold_file.touch()  # the model pauses halfway until the test lets it go on
    try:
        process = judge(chat_app, chat, text, "--mode", "reconnect", "--before", "4")
        partial = next_line(process)
        assert partial["event"] == "partial"
        assert len(partial["chunks"]) == 4
        assert next_line(process) == {"event": "reconnected"}
    finally:
        chat_app.hold_file.unlink()
    done = next_line(process)
    assert done["event"] == "done"
    whole = expected_chunks(text, done["chunks"])
    assert done["chunks"] == whole
    assert partial["chunks"] == whole[:4]
    assert done["text"] == reply_to(text)
    assert next_line(process) == {"event": "after", "inFlight": False}
    assert finish(process) == 0

    # The same conversation, as a session: the question and the whole reply.
    url = session_url(chat_app.gateway.url, chat)
    state = await load_session(url, token=ADMIN)
    assert [(m.author, m.text, m.streaming) for m in state.messages()] == [
        ("user:guest", text, False),
        ("assistant:fake-model", reply_to(text), False),
    ]


def test_bad_requests_are_refused_with_a_reason(chat_app: ChatApp) -> None:
    with httpx.Client(base_url=chat_app.url) as http:
        refused = http.post("/api/chat", content=b"not json")
        assert (refused.status_code, refused.json()) == (400, {"error": "the body is not JSON"})
        bad_id = http.post("/api/chat", json={"id": "../x", "messages": []})
        assert bad_id.status_code == 400
        assert http.get("/api/chat/nothing-here/stream").status_code == 204

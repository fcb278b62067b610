"""``python -m chat_example``: serve the example on 127.0.0.1:3000 (``make example-chat``)."""

from __future__ import annotations

import argparse

import uvicorn

from chat_example.app import ChatSettings


def main() -> None:
    parser = argparse.ArgumentParser(prog="chat-example", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=3000)
    args = parser.parse_args()
    ChatSettings.from_env()  # fail early, with the way out, when the stack's settings are missing
    uvicorn.run("chat_example.app:create_app", factory=True, host=args.host, port=args.port)


if __name__ == "__main__":
    main()

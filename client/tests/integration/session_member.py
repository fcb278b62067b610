"""A session member for the expiry test: joins, types, and stays until it is killed.

Presence lasts ``--ttl`` seconds and is refreshed every ``--ttl / 4``; typing
the same. Prints ``joined`` once its first events are stored.
"""

from __future__ import annotations

import argparse
import asyncio
from datetime import timedelta

from durable_sessions.sessions import AsyncSessionWriter


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--ttl", type=float, required=True)
    args = parser.parse_args()
    ttl = timedelta(seconds=args.ttl)
    writer = AsyncSessionWriter(
        args.url,
        token=args.token,
        presence_ttl=ttl,
        presence_refresh=ttl / 4,
        typing_ttl=ttl,
        typing_refresh=ttl / 4,
    )
    writer.join(args.user)
    async with writer.keep_typing(args.user):
        await writer.flush()
        print("joined", flush=True)
        await asyncio.Event().wait()  # until SIGKILL


if __name__ == "__main__":
    asyncio.run(main())

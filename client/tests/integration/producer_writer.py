"""A writer process for the crash tests: resumes exactly where its killed predecessor stopped.

It appends ``{"kind": "data", "n": n}`` for n = 0..count-1 with an idempotent
producer (``auto_claim``, epoch 0: it keeps no state of its own). A restart
finds where to resume without ever doubling a message:

1. it appends a ``start`` marker and flushes, which claims a newer epoch
   than its predecessor's: from then on the server refuses (403) anything
   the dead process still had on the wire;
2. it reads the stream: the data before its marker is exactly what the
   predecessor got stored, so it resumes after the highest ``n``.

Prints ``claimed epoch=E resume=R`` after step 2 and ``done`` at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import uuid

import httpx
from durable_sessions import AsyncIdempotentProducer, IdempotentProducer
from durable_sessions.protocol import split_json_arrays


def resume_point(url: str, token: str, run: str) -> int:
    """One past the highest ``n`` stored before this run's marker."""
    highest = -1
    offset = "-1"
    with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        while True:
            response = http.get(url, params={"offset": offset})
            response.raise_for_status()
            for raw in split_json_arrays(response.content):
                message = json.loads(raw)
                if message == {"kind": "start", "run": run}:
                    return highest + 1
                if message["kind"] == "data":
                    highest = max(highest, message["n"])
            offset = response.headers["Stream-Next-Offset"]
            if response.headers.get("Stream-Up-To-Date") == "true":
                raise SystemExit("this run's marker is not in the stream")


def options(args: argparse.Namespace) -> dict[str, object]:
    return {
        "auto_claim": True,
        "token": args.token,
        "max_batch_bytes": 2048,
        "linger_ms": 2,
        "content_type": "application/json",
    }


def run_sync(args: argparse.Namespace) -> None:
    run = uuid.uuid4().hex
    with IdempotentProducer(args.url, args.producer_id, **options(args)) as producer:  # type: ignore[arg-type]
        producer.append({"kind": "start", "run": run})
        producer.flush()
        resume = resume_point(args.url, args.token, run)
        print(f"claimed epoch={producer.epoch} resume={resume}", flush=True)
        for n in range(resume, args.count):
            producer.append({"kind": "data", "n": n})
            if n % 10 == 0:
                time.sleep(args.pace_ms / 1000)
        producer.flush()
    print("done", flush=True)


async def run_async(args: argparse.Namespace) -> None:
    run = uuid.uuid4().hex
    async with AsyncIdempotentProducer(args.url, args.producer_id, **options(args)) as producer:  # type: ignore[arg-type]
        producer.append({"kind": "start", "run": run})
        await producer.flush()
        resume = await asyncio.to_thread(resume_point, args.url, args.token, run)
        print(f"claimed epoch={producer.epoch} resume={resume}", flush=True)
        for n in range(resume, args.count):
            producer.append({"kind": "data", "n": n})
            if n % 10 == 0:
                await asyncio.sleep(args.pace_ms / 1000)
        await producer.flush()
    print("done", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--producer-id", required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--variant", choices=("sync", "async"), required=True)
    parser.add_argument("--pace-ms", type=float, default=10.0)
    args = parser.parse_args()
    if args.variant == "sync":
        run_sync(args)
    else:
        asyncio.run(run_async(args))


if __name__ == "__main__":
    main()

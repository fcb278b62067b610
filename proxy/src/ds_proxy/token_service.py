"""``ds-token-service``: keep the services' tokens in files, short-lived and renewed.

Each ``--token FILE:SUB:BUCKETS`` is a token for ``SUB`` reading and writing
``BUCKETS`` (comma-separated, ``*`` for every one), kept in ``DIR/FILE``. A
token lives ``--ttl`` seconds and is replaced when half of that has passed,
each file in one step (written beside it, then renamed over it), so a
reader sees the old token or the new one, never a torn file. The services
read their file again whenever it changes (``durable_sessions.tokens``), so
no token outlives an hour by default and none needs a restart to renew.

::

    ds-token-service --dir /run/ds-tokens --ttl 3600 \\
        --token ds-sync:ds-sync:'*' --token heartbeat:heartbeat:session-events
    ds-token-service --dir /run/ds-tokens --check    # a healthcheck

``--check`` exits 0 when every file holds a token that still has more than a
quarter of its life ahead (a service that failed to renew shows unhealthy);
without ``--token`` it checks what the running service keeps, which it
notes in ``DIR/.service.json``.
Signed with ``--key`` (the committed test-only key by default: a local tool).
"""

from __future__ import annotations

import argparse
import base64
import json
import logging
import os
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ds_proxy.keys import TEST_KID, TEST_PRIVATE_KEY, load_private_key
from ds_proxy.tokens import TEST_AUDIENCE, TEST_ISSUER, TokenSpec, mint

if TYPE_CHECKING:
    from collections.abc import Sequence

    from cryptography.hazmat.primitives.asymmetric import rsa

log = logging.getLogger("ds_proxy.token_service")


@dataclass(frozen=True, slots=True)
class Grant:
    """One service's token: its file name, subject and buckets."""

    file: str
    sub: str
    buckets: tuple[str, ...]

    @classmethod
    def parse(cls, text: str) -> Grant:
        file, sub, buckets = [*text.split(":", 2), "", ""][:3]
        names = tuple(part.strip() for part in buckets.split(",") if part.strip())
        if not file or "/" in file or file.startswith(".") or not sub or not names:
            raise argparse.ArgumentTypeError(
                f"{text!r}: expected FILE:SUB:BUCKETS, e.g. ds-sync:ds-sync:*"
            )
        return cls(file, sub, names)


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path``'s content in one step: a reader sees the old file or the new one."""
    staged = path.with_name(f".{path.name}.new")
    with staged.open("w", encoding="utf-8") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())
    staged.chmod(0o644)  # the services run as users of their own images
    os.replace(staged, path)


def renew(directory: Path, grants: Sequence[Grant], ttl: int, key: rsa.RSAPrivateKey) -> None:
    """Write a fresh token for every grant."""
    now = int(time.time())
    for grant in grants:
        spec = TokenSpec(sub=grant.sub, read=grant.buckets, write=grant.buckets, expires_in=ttl)
        write_atomically(directory / grant.file, mint(spec, key=key, kid=TEST_KID, now=now) + "\n")
    log.info("renewed %d tokens, valid for %d s", len(grants), ttl)


def expiry(token: str) -> int | None:
    """The ``exp`` a token claims (read, not verified: the files are our own)."""
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        return int(claims["exp"])
    except (IndexError, ValueError, KeyError, TypeError):
        return None


def fresh(directory: Path, grants: Sequence[Grant], ttl: int) -> list[str]:
    """What is wrong with the files: missing, unreadable, or too close to expiry."""
    problems = []
    for grant in grants:
        path = directory / grant.file
        try:
            exp = expiry(path.read_text(encoding="utf-8").strip())
        except OSError as error:
            problems.append(f"{path}: {error.strerror}")
            continue
        if exp is None:
            problems.append(f"{path}: not a token")
        elif exp - time.time() < ttl / 4:
            problems.append(f"{path}: expires in {exp - time.time():.0f} s")
    return problems


MANIFEST = ".service.json"


def write_manifest(directory: Path, grants: Sequence[Grant], ttl: int) -> None:
    """Note what this service keeps, for ``--check``."""
    manifest = {"ttl": ttl, "tokens": [f"{g.file}:{g.sub}:{','.join(g.buckets)}" for g in grants]}
    write_atomically(directory / MANIFEST, json.dumps(manifest) + "\n")


def read_manifest(directory: Path) -> tuple[list[Grant], int]:
    """The grants and lifetime a running service noted in ``directory``."""
    manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    return [Grant.parse(text) for text in manifest["tokens"]], int(manifest["ttl"])


def serve(
    directory: Path,
    grants: Sequence[Grant],
    ttl: int,
    key: rsa.RSAPrivateKey,
    stop: threading.Event,
) -> None:
    """Renew every ``ttl / 2`` seconds until ``stop``; a failed renewal is retried soon."""
    while not stop.is_set():
        try:
            renew(directory, grants, ttl, key)
            wait = ttl / 2
        except OSError:
            log.exception("renewing the tokens failed; trying again in 10 s")
            wait = 10.0
        stop.wait(wait)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ds-token-service",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--dir", type=Path, required=True, help="where the token files are")
    parser.add_argument(
        "--token",
        type=Grant.parse,
        action="append",
        default=[],
        help="FILE:SUB:BUCKETS (repeat for each service)",
    )
    parser.add_argument("--ttl", type=int, default=3600, help="a token's life in seconds (3600)")
    parser.add_argument("--key", type=Path, default=TEST_PRIVATE_KEY, help="PEM private key")
    parser.add_argument("--check", action="store_true", help="exit 0 if every file is fresh")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    if args.ttl < 2:
        raise SystemExit("ds-token-service: --ttl must be at least 2 s")
    if args.check:
        grants, ttl = args.token, args.ttl
        if not grants:
            try:
                grants, ttl = read_manifest(args.dir)
            except (OSError, ValueError, KeyError, argparse.ArgumentTypeError) as error:
                raise SystemExit(
                    f"ds-token-service: no service keeps {args.dir}: {error}"
                ) from None
        problems = fresh(args.dir, grants, ttl)
        if problems:
            raise SystemExit("; ".join(problems))
        return
    if not args.token:
        raise SystemExit("ds-token-service: give at least one --token FILE:SUB:BUCKETS")
    logging.basicConfig(level=logging.INFO, format="ds-token-service: %(message)s")
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    args.dir.mkdir(parents=True, exist_ok=True)
    # Checked once: a key that cannot be read is a configuration error, not a retry.
    key = load_private_key(args.key)
    write_manifest(args.dir, args.token, args.ttl)
    log.info(
        "keeping %s in %s (issuer %s, audience %s)",
        ", ".join(grant.file for grant in args.token),
        args.dir,
        TEST_ISSUER,
        TEST_AUDIENCE,
    )
    serve(args.dir, args.token, args.ttl, key, stop)


if __name__ == "__main__":
    main()

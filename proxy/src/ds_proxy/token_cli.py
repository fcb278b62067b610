"""``ds-token``: print a JWT for the local gateway (test-only key by default).

Examples::

    ds-token                                   # valid for 1 h, sub test-user, every bucket
    ds-token --sub alice --bucket chat         # read + write on bucket "chat" only
    ds-token --read chat,agents --write chat   # separate read and write lists
    ds-token --kind expired                    # also: not-yet-valid, wrong-issuer, wrong-audience
    ds-token --forge alg-none                  # also: hs256-public-key, bad-signature,
                                               #       other-key, malformed
    curl -H "Authorization: Bearer $(ds-token)" localhost:8080/v1/stream/chat/room-1
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ds_proxy.forged import FORGERIES
from ds_proxy.keys import TEST_KID, TEST_PRIVATE_KEY, load_private_key
from ds_proxy.tokens import KINDS, TEST_AUDIENCE, TEST_ISSUER, TokenSpec, mint


def _buckets(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``ds-token``."""
    parser = argparse.ArgumentParser(
        prog="ds-token",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--kind", choices=sorted(KINDS), default="valid")
    parser.add_argument("--forge", choices=sorted(FORGERIES), help="an invalid token instead")
    parser.add_argument("--sub", default="test-user", help="subject (default: test-user)")
    parser.add_argument("--no-sub", action="store_true", help="leave the sub claim out")
    parser.add_argument("--bucket", type=_buckets, help="read AND write these buckets (a,b)")
    parser.add_argument("--read", type=_buckets, help="buckets to read, comma-separated (* = all)")
    parser.add_argument("--write", type=_buckets, help="buckets to write, comma-separated")
    parser.add_argument("--no-scopes", action="store_true", help="leave the ds claim out")
    parser.add_argument("--ttl", type=int, default=3600, help="lifetime in seconds (valid kind)")
    parser.add_argument("--issuer", default=TEST_ISSUER)
    parser.add_argument("--audience", default=TEST_AUDIENCE, help="comma-separated for several")
    parser.add_argument("--key", type=Path, default=TEST_PRIVATE_KEY, help="PEM private key")
    parser.add_argument("--kid", default=TEST_KID)
    parser.add_argument("--claims", action="store_true", help="print the claims, not a token")
    return parser


def spec_from_args(args: argparse.Namespace) -> TokenSpec:
    """The token the arguments describe."""
    read: tuple[str, ...] | None = ("*",)
    write: tuple[str, ...] | None = ("*",)
    if args.bucket is not None:
        read = write = args.bucket
    if args.read is not None or args.write is not None:
        read, write = args.read or (), args.write or ()
    if args.no_scopes:
        read = write = None
    audiences = _buckets(args.audience)
    spec = TokenSpec(
        sub=None if args.no_sub else args.sub,
        issuer=args.issuer,
        audience=audiences[0] if len(audiences) == 1 else audiences,
        read=read,
        write=write,
        expires_in=args.ttl,
    )
    kind = KINDS[args.kind]
    return kind(spec)


def main(argv: list[str] | None = None) -> None:
    """Print one token (or its claims) on stdout."""
    args = build_parser().parse_args(argv)
    spec = spec_from_args(args)
    if args.claims:
        json.dump(spec.claims(), sys.stdout, indent=2, sort_keys=True)
        sys.stdout.write("\n")
        return
    if args.forge is not None:
        print(FORGERIES[args.forge](spec))
        return
    print(mint(spec, key=load_private_key(args.key), kid=args.kid))


if __name__ == "__main__":
    main()

"""Where a webhook POST connects: the host resolved once, every address checked, pinned.

``url_policy`` judges the URL a client registers; it cannot judge what a
host name will resolve to at delivery time. A name that resolved to a public
address when checked and to ``10.0.0.5`` a second later (DNS rebinding)
would turn the server into a probe of its own network. So each delivery
resolves the host, refuses it unless *every* address is acceptable, and
connects to the address it checked: the URL carries that address, the
``Host`` header and the TLS server name carry the original host.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    Resolver = Callable[[str, int], Awaitable[list[str]]]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class UnsafeTarget(Exception):
    """The webhook host does not resolve, or resolves to an address deliveries may not reach."""


@dataclass(frozen=True, slots=True)
class PinnedTarget:
    """A webhook request bound to one checked address."""

    # The original URL with each checked address as its host, in the
    # resolver's order: a connection is tried on the next when one fails.
    urls: tuple[str, ...]
    host_header: str  # the original host (and port), for the Host header
    server_name: str | None  # the TLS server name (https only)


async def system_resolver(host: str, port: int) -> list[str]:
    """The host's addresses from the system resolver, without blocking the event loop."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


async def pin(
    url: str, *, allow_private: bool, resolve: Resolver = system_resolver
) -> PinnedTarget:
    """Resolve ``url``'s host and bind the request to a checked address, or raise UnsafeTarget.

    ``http`` targets (development receivers) must resolve to loopback only;
    ``https`` targets to public addresses only, unless ``allow_private``
    (receivers on an internal network). Unspecified and multicast addresses
    are never reachable.
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    https = parts.scheme == "https"
    port = parts.port or (443 if https else 80)
    try:
        found = await resolve(host, port)
    except OSError:
        raise UnsafeTarget(f"webhook host {host!r} does not resolve") from None
    if not found:
        raise UnsafeTarget(f"webhook host {host!r} does not resolve")
    addresses = [_address(text) for text in found]
    for address in addresses:
        problem = _problem(address, https=https, allow_private=allow_private)
        if problem is not None:
            raise UnsafeTarget(f"webhook host {host!r} resolves to {address}: {problem}")
    urls = tuple(
        urlunsplit((parts.scheme, _netloc(address, parts.port), parts.path, parts.query, ""))
        for address in dict.fromkeys(addresses)
    )
    return PinnedTarget(
        urls=urls,
        host_header=parts.netloc.rpartition("@")[2],
        server_name=host if https else None,
    )


def _netloc(address: Address, port: int | None) -> str:
    literal = f"[{address}]" if address.version == 6 else str(address)
    return f"{literal}:{port}" if port is not None else literal


def _address(text: str) -> Address:
    # Link-local IPv6 answers carry a zone ("fe80::1%eth0"); the zone is not the address.
    address = ipaddress.ip_address(text.partition("%")[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _problem(address: Address, *, https: bool, allow_private: bool) -> str | None:
    if address.is_unspecified or address.is_multicast:
        return "not a host address"
    if not https:
        return None if address.is_loopback else "plain http is only for loopback receivers"
    if address.is_global or allow_private:
        return None
    return "not a public address (DS_SUBSCRIPTIONS__WEBHOOK_ALLOW_PRIVATE allows it)"

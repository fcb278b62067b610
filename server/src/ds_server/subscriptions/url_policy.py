"""Which webhook URLs the server will POST to.

Plain ``http`` is only for local development receivers (``localhost`` and
``127.0.0.0/8``); everything else must be ``https`` to a public address, so a
subscription cannot turn the server into a probe of its own network. Host
names are not resolved here: the check is about what the client asked for.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from urllib.parse import urlsplit

MAX_URL_LENGTH = 2048
_LOOPBACK_V4 = ipaddress.IPv4Network("127.0.0.0/8")
# Shapes that inet_aton would read as an IPv4 address ("2130706433", "0x7f.1").
_NUMERIC_HOST = re.compile(r"[0-9a-fA-FxX.]+")


def rejection_reason(url: str) -> str | None:
    """Why ``url`` may not be used as a webhook target, or None when it may."""
    if len(url) > MAX_URL_LENGTH:
        return "webhook URL is too long"
    if any(char.isspace() or ord(char) < 0x20 for char in url):
        return "webhook URL contains whitespace or control characters"
    try:
        parts = urlsplit(url)
        host = parts.hostname
        _ = parts.port  # raises on a malformed port
    except ValueError:
        return "webhook URL is malformed"
    if parts.scheme not in ("http", "https"):
        return "webhook URL must use http or https"
    if not host:
        return "webhook URL has no host"
    if parts.username is not None or parts.password is not None:
        return "webhook URL must not carry credentials"
    if parts.scheme == "http":
        if host == "localhost" or _is_loopback_v4(host):
            return None
        return "plain http is only allowed for localhost and 127.0.0.0/8; use https"
    return _https_host_problem(host)


def _is_loopback_v4(host: str) -> bool:
    try:
        address = ipaddress.IPv4Address(host)
    except ValueError:
        return False
    return address in _LOOPBACK_V4


def _https_host_problem(host: str) -> str | None:
    if host == "localhost" or host.endswith((".localhost", ".localhost.")):
        return "webhook host must not be localhost"
    if ":" in host:
        return "IPv6 literal webhook hosts are not allowed"
    address = _as_ipv4(host)
    if address is None:
        return None
    if not address.is_global or address.is_multicast or address.is_reserved:
        return "webhook host must be a public address"
    return None


def _as_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The address ``host`` names when it is numeric, in any form a resolver accepts."""
    if _NUMERIC_HOST.fullmatch(host) is None:
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host.rstrip(".")))
    except OSError:
        # Hex-looking names such as "cafe.de" are ordinary host names.
        return None

"""Webhook URL safety: http only to loopback, https only to public addresses."""

from __future__ import annotations

import pytest
from ds_server.subscriptions.url_policy import rejection_reason


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:43211/webhook",
        "http://127.9.9.9/hook",
        "http://localhost:8080/hook",
        "https://example.com/hook",
        "https://hooks.example.com:8443/a?b=c",
        "https://8.8.8.8/hook",
    ],
)
def test_accepted(url: str) -> None:
    assert rejection_reason(url) is None


@pytest.mark.parametrize(
    "url",
    [
        "http://10.0.0.1/hook",  # the conformance suite's case
        "http://example.com/hook",  # plain http off-box
        "http://192.168.1.1/hook",
        "https://10.0.0.1/hook",
        "https://172.16.0.1/hook",
        "https://192.168.0.1/hook",
        "https://127.0.0.1/hook",
        "https://169.254.169.254/latest/meta-data",  # cloud metadata
        "https://0.0.0.0/hook",
        "https://100.64.0.1/hook",  # CGNAT
        "https://192.0.2.1/hook",  # documentation
        "https://224.0.0.1/hook",  # multicast
        "https://240.0.0.1/hook",  # reserved
        "https://localhost/hook",
        "https://app.localhost/hook",
        "https://[::1]/hook",
        "https://[2001:db8::1]/hook",
        "https://2130706433/hook",  # 127.0.0.1 in decimal
        "https://0x7f.1/hook",  # 127.0.0.1 in hex shorthand
        "https://0/hook",
        "ftp://example.com/hook",
        "example.com/hook",
        "https:///nohost",
        "https://user:pw@example.com/hook",
        "http://127.0.0.1:99999/hook",
        "https://exa mple.com/",
        "https://example.com/" + "a" * 3000,
    ],
)
def test_rejected(url: str) -> None:
    assert rejection_reason(url) is not None


def test_hex_looking_host_names_are_names() -> None:
    assert rejection_reason("https://cafe.de/hook") is None

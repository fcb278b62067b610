"""ds_proxy.local_cert: a self-signed certificate for a loopback gateway."""

from __future__ import annotations

import datetime
import ipaddress
import stat
from typing import TYPE_CHECKING

from cryptography import x509
from ds_proxy.local_cert import (
    CERT_NAME,
    KEY_NAME,
    ensure_local_certificate,
    install,
    make_certificate,
)

if TYPE_CHECKING:
    from pathlib import Path


def test_the_certificate_names_the_loopback_hosts() -> None:
    cert_pem, key_pem = make_certificate()
    certificate = x509.load_pem_x509_certificate(cert_pem)
    names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["localhost"]
    assert names.get_values_for_type(x509.IPAddress) == [
        ipaddress.ip_address("127.0.0.1"),
        ipaddress.ip_address("::1"),
    ]
    left = certificate.not_valid_after_utc - datetime.datetime.now(datetime.UTC)
    assert datetime.timedelta(days=29) < left <= datetime.timedelta(days=30)
    assert key_pem.startswith(b"-----BEGIN PRIVATE KEY-----")


def test_ensure_keeps_a_valid_pair_and_replaces_an_expiring_one(tmp_path: Path) -> None:
    cert, key = ensure_local_certificate(tmp_path)
    assert (cert.name, key.name) == (CERT_NAME, KEY_NAME)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    first = cert.read_bytes()
    assert ensure_local_certificate(tmp_path) == (cert, key)
    assert cert.read_bytes() == first
    install(tmp_path, *make_certificate(valid_days=0))
    ensure_local_certificate(tmp_path)
    assert cert.read_bytes() != first
    renewed = x509.load_pem_x509_certificate(cert.read_bytes())
    assert renewed.not_valid_after_utc > datetime.datetime.now(datetime.UTC)

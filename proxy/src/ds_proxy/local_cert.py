"""A self-signed certificate for a gateway on loopback (``make dev TLS=1``, tests).

Made with ``cryptography`` (already a dependency, for the test keys): an
ECDSA P-256 key and a certificate for ``localhost``, ``127.0.0.1`` and
``::1``, valid for 30 days. ``ensure_local_certificate`` keeps the pair in a
directory and makes a new one when it is missing or has less than a day
left; both files are written elsewhere and renamed into place, the way the
gateway's certificate watch expects (``ds_proxy.tls``). Browsers and
clients trust it only when told to (``curl --cacert``, ``SSL_CERT_FILE``).
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from typing import TYPE_CHECKING

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

if TYPE_CHECKING:
    from pathlib import Path

CERT_NAME = "gateway.crt"
KEY_NAME = "gateway.key"
VALID_DAYS = 30
_RENEW_BEFORE = datetime.timedelta(days=1)
HOSTS = ("localhost",)
ADDRESSES = ("127.0.0.1", "::1")


def make_certificate(
    common_name: str = "durable-sessions local gateway", valid_days: int = VALID_DAYS
) -> tuple[bytes, bytes]:
    """A fresh self-signed certificate and its key, both PEM."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.UTC)
    alt_names: list[x509.GeneralName] = [x509.DNSName(host) for host in HOSTS]
    alt_names += [x509.IPAddress(ipaddress.ip_address(address)) for address in ADDRESSES]
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=valid_days))
        .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return certificate.public_bytes(serialization.Encoding.PEM), key_pem


def install(directory: Path, certificate: bytes, key: bytes) -> tuple[Path, Path]:
    """Put a certificate and key into ``directory``: written beside, then renamed into place."""
    directory.mkdir(parents=True, exist_ok=True)
    cert_path, key_path = directory / CERT_NAME, directory / KEY_NAME
    for path, data, mode in ((key_path, key, 0o600), (cert_path, certificate, 0o644)):
        staged = path.with_name(f".{path.name}.new")
        staged.unlink(missing_ok=True)
        fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        staged.replace(path)
    return cert_path, key_path


def ensure_local_certificate(directory: Path) -> tuple[Path, Path]:
    """The certificate and key in ``directory``, made now if missing or about to expire."""
    cert_path, key_path = directory / CERT_NAME, directory / KEY_NAME
    if cert_path.is_file() and key_path.is_file():
        certificate = x509.load_pem_x509_certificate(cert_path.read_bytes())
        left = certificate.not_valid_after_utc - datetime.datetime.now(datetime.UTC)
        if left > _RENEW_BEFORE:
            return cert_path, key_path
    return install(directory, *make_certificate())

"""TLS and HTTP/2 at the gateway, with a self-signed certificate: curl over h2, rotation.

The stack's Envoy serves TLS with a certificate made for the test
(``ds_proxy.local_cert``) in a directory of its own; curl (``--cacert``)
and Python's ssl trust it by being told to. A second certificate moved into
that directory replaces the first without a restart.
"""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import time
from typing import TYPE_CHECKING

import pytest
from ds_proxy.local_cert import install, make_certificate
from gateway_stack import ADMIN, GatewayStack, running_gateway, unique

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

CURL = shutil.which("curl")
ROTATION_TIMEOUT_SECS = 30.0


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("tls") / "live"
    install(directory, *make_certificate("first"))
    return directory


@pytest.fixture(scope="module")
def tls_stack(tmp_path_factory: pytest.TempPathFactory, certs: Path) -> Iterator[GatewayStack]:
    with running_gateway(
        tmp_path_factory.mktemp("tls-stack"),
        server_env={"DS_SERVER__SSE_RECONNECT_INTERVAL_SECS": "60"},
        tls_files=(certs / "gateway.crt", certs / "gateway.key"),
    ) as gateway:
        yield gateway


def curl(*args: str, cacert: Path) -> subprocess.CompletedProcess[str]:
    assert CURL is not None, "curl is missing"
    return subprocess.run(
        [CURL, "--silent", "--show-error", "--cacert", str(cacert), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def served_certificate(port: int) -> bytes:
    """The certificate the gateway presents to a new connection (DER)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        context.wrap_socket(raw) as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return der


def pem_to_der(path: Path) -> bytes:
    return ssl.PEM_cert_to_DER_cert(path.read_text())


def test_curl_speaks_http2_over_tls(tls_stack: GatewayStack, certs: Path) -> None:
    assert (
        "HTTP2"
        in subprocess.run([CURL or "curl", "--version"], capture_output=True, text=True).stdout
    )
    auth = f"Authorization: Bearer {ADMIN}"
    path = f"{tls_stack.url}/v1/stream/{unique('tls')}/room"
    created = curl(
        "--http2", "-X", "PUT", "-H", auth, "-H", "Content-Type: application/json",
        "-D", "-", "-o", "/dev/null", path, cacert=certs / "gateway.crt",
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    head = created.stdout.lower()
    assert head.startswith("http/2 201")
    # The Location is the client's URL, https and all (X-Forwarded-Proto from Envoy).
    assert f"location: {path}" in head
    posted = curl(
        "--http2", "-X", "POST", "-H", auth, "-H", "Content-Type: application/json",
        "--data", '{"n": 1}', "-o", "/dev/null", "-w", "%{http_version} %{http_code}", path,
        cacert=certs / "gateway.crt",
    )  # fmt: skip
    assert posted.stdout == "2 204", posted.stderr
    # A live read over h2: the SSE body arrives (the read is cut after its first event).
    read = curl(
        "--http2", "-N", "--max-time", "3", "-H", auth, "-w", "\n%{http_version}",
        f"{path}?offset=-1&live=sse", cacert=certs / "gateway.crt",
    )  # fmt: skip
    assert "event: data" in read.stdout
    assert '[{"n": 1}]' in read.stdout or '[{"n":1}]' in read.stdout
    assert read.stdout.rstrip().endswith("2")
    entry = tls_stack.access_log_entry(lambda e: e["method"] == "POST" and e["status"] == 204)
    assert entry["protocol"] == "HTTP/2"


def test_alpn_offers_h2_and_http11_and_nothing_below_tls12(
    tls_stack: GatewayStack, certs: Path
) -> None:
    cafile = str(certs / "gateway.crt")
    for offered, chosen in ((["h2", "http/1.1"], "h2"), (["http/1.1"], "http/1.1")):
        context = ssl.create_default_context(cafile=cafile)
        context.set_alpn_protocols(offered)
        with (
            socket.create_connection(("127.0.0.1", tls_stack.listen_port), timeout=10) as raw,
            context.wrap_socket(raw, server_hostname="localhost") as tls,
        ):
            assert tls.selected_alpn_protocol() == chosen
            assert tls.version() in ("TLSv1.2", "TLSv1.3")
    old = curl("--tls-max", "1.1", f"{tls_stack.url}/healthz", cacert=certs / "gateway.crt")
    assert old.returncode != 0
    plain = curl("--http1.1", "-w", "%{http_version} %{http_code}", "-o", "/dev/null",
                 f"{tls_stack.url}/healthz", cacert=certs / "gateway.crt")  # fmt: skip
    assert plain.stdout == "1.1 200"
    # Plain HTTP to the TLS port gets nowhere.
    cleartext = subprocess.run(
        [CURL or "curl", "--silent", "--max-time", "5", f"http://127.0.0.1:{tls_stack.listen_port}/healthz"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert cleartext.returncode != 0


def test_a_certificate_moved_into_place_is_served_without_a_restart(
    tls_stack: GatewayStack, certs: Path, tmp_path: Path
) -> None:
    envoy_pid = tls_stack.envoy.pid
    before = served_certificate(tls_stack.listen_port)
    assert before == pem_to_der(certs / "gateway.crt")
    new_cert, new_key = make_certificate("second")
    install(certs, new_cert, new_key)
    expected = ssl.PEM_cert_to_DER_cert(new_cert.decode())
    deadline = time.monotonic() + ROTATION_TIMEOUT_SECS
    while served_certificate(tls_stack.listen_port) != expected:
        assert time.monotonic() < deadline, "the new certificate was never served"
        time.sleep(0.2)
    assert tls_stack.envoy.pid == envoy_pid
    # And it works as before.
    health = curl("--http2", "-w", "%{http_version} %{http_code}", "-o", "/dev/null",
                  f"{tls_stack.url}/healthz", cacert=certs / "gateway.crt")  # fmt: skip
    assert health.stdout == "2 200", health.stderr

"""ds_proxy.tls: the listener's TLS context and the certificate's SDS file."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import yaml
from ds_proxy import envoy_config as ec
from ds_proxy import tls
from ds_proxy.local_cert import install, make_certificate
from ds_proxy.paths import DEV_CONFIG
from pydantic import ValidationError

if TYPE_CHECKING:
    from pathlib import Path

DEV = ec.load(DEV_CONFIG)


def test_serving_tls_offers_h2_and_http11_from_tls12(tmp_path: Path) -> None:
    config = tls.serving_tls(DEV, tmp_path / "sds.yaml")
    [chain] = ec.listener(config)["filter_chains"]
    socket = chain["transport_socket"]
    assert socket["name"] == "envoy.transport_sockets.tls"
    common = socket["typed_config"]["common_tls_context"]
    assert common["alpn_protocols"] == ["h2", "http/1.1"]
    assert common["tls_params"] == {"tls_minimum_protocol_version": "TLSv1_2"}
    [secret] = common["tls_certificate_sds_secret_configs"]
    assert secret["name"] == tls.SECRET_NAME
    assert secret["sds_config"]["path_config_source"]["path"] == str(tmp_path / "sds.yaml")
    # SDS from a file needs a node; HTTP/2 needs nothing more (the codec is AUTO).
    assert config["node"] == tls.NODE
    assert ec.http_connection_manager(config)["codec_type"] == "AUTO"
    # The committed config stays plain.
    assert "transport_socket" not in ec.listener(DEV)["filter_chains"][0]


def test_the_sds_file_names_the_files_and_watches_their_directory(tmp_path: Path) -> None:
    cert, key = install(tmp_path / "live", *make_certificate())
    files = tls.TlsFiles(tls_cert_file=cert, tls_key_file=key)
    config = tls.with_tls(DEV, files, tmp_path / "envoy.yaml")
    sds_path = tls.sds_path_for(tmp_path / "envoy.yaml")
    assert sds_path == tmp_path / "envoy.tls-sds.yaml"
    [secret] = yaml.safe_load(sds_path.read_text())["resources"]
    assert secret["name"] == tls.SECRET_NAME
    assert secret["tls_certificate"] == {
        "certificate_chain": {"filename": str(cert)},
        "private_key": {"filename": str(key)},
        "watched_directory": {"path": str(tmp_path / "live")},
    }
    assert "transport_socket" in ec.listener(config)["filter_chains"][0]


def test_without_files_the_config_is_unchanged(tmp_path: Path) -> None:
    assert tls.with_tls(DEV, tls.TlsFiles(), tmp_path / "envoy.yaml") is DEV
    assert not tls.TlsFiles().enabled


def test_certificate_and_key_go_together(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="together"):
        tls.TlsFiles(tls_cert_file=tmp_path / "x.crt")


def test_settings_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DS_PROXY__TLS_CERT_FILE", str(tmp_path / "a.crt"))
    monkeypatch.setenv("DS_PROXY__TLS_KEY_FILE", str(tmp_path / "a.key"))
    files = tls.TlsFiles()
    assert files.enabled
    assert files.tls_cert_file == tmp_path / "a.crt"

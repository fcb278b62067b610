"""TLS at the gateway: a certificate and key from files, HTTP/2 by ALPN, TLS 1.2 and up.

Browsers speak HTTP/2 only over TLS, and over HTTP/1.1 they open at most
six connections to a host: a page following more than six sessions (an SSE
response each) starves. With ``DS_PROXY__TLS_CERT_FILE`` and
``DS_PROXY__TLS_KEY_FILE`` set, the public listener serves TLS (1.2 at
least) and offers ``h2`` and ``http/1.1`` by ALPN; the HTTP connection
manager's ``codec_type: AUTO`` speaks whichever the client chose.

The certificate reaches Envoy by SDS from a file (written beside the
config) that names the two files and watches their directory: a new pair
*moved* into it (renamed into place, as certbot's and Kubernetes' secret
volumes' symlink swaps do) is loaded by itself, no restart; connections
already open keep theirs. A file rewritten in place is not noticed.
Without the two settings the listener serves plain HTTP, as the committed
configs do (TLS left to a load balancer in front).
"""

from __future__ import annotations

import copy
from pathlib import Path

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from ds_proxy import envoy_config as ec

SECRET_NAME = "gateway_certificate"
ALPN = ["h2", "http/1.1"]
MIN_VERSION = "TLSv1_2"
# SDS from a file needs the node to say who it is.
NODE = {"id": "ds-gateway", "cluster": "ds-gateway"}
_SECRET_TYPE = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret"
_TLS_CONTEXT_TYPE = (
    "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext"
)


class TlsFiles(BaseSettings):
    """Where the gateway's certificate and key are; both, or neither (plain HTTP)."""

    model_config = SettingsConfigDict(env_prefix="DS_PROXY__", extra="ignore", frozen=True)

    tls_cert_file: Path | None = Field(
        default=None,
        description="PEM certificate chain the gateway serves TLS 1.2+ and HTTP/2 with "
        "(with `DS_PROXY__TLS_KEY_FILE`); files renamed into place later are loaded without "
        "a restart; unset: plain HTTP",
    )
    tls_key_file: Path | None = Field(
        default=None, description="PEM private key of `DS_PROXY__TLS_CERT_FILE`"
    )

    @model_validator(mode="after")
    def _both_or_neither(self) -> TlsFiles:
        if (self.tls_cert_file is None) != (self.tls_key_file is None):
            raise ValueError("set DS_PROXY__TLS_CERT_FILE and DS_PROXY__TLS_KEY_FILE together")
        return self

    @property
    def enabled(self) -> bool:
        return self.tls_cert_file is not None


def sds_path_for(config_path: Path) -> Path:
    """Where the certificate's SDS file goes: beside the config."""
    return config_path.with_name(config_path.stem + ".tls-sds.yaml")


def sds_document(cert_file: Path, key_file: Path) -> ec.Config:
    """The SDS resource naming the certificate and key, reloaded when their directory changes."""
    cert, key = cert_file.resolve(), key_file.resolve()
    return {
        "resources": [
            {
                "@type": _SECRET_TYPE,
                "name": SECRET_NAME,
                "tls_certificate": {
                    "certificate_chain": {"filename": str(cert)},
                    "private_key": {"filename": str(key)},
                    # A pair moved in is read together, checked to belong together.
                    "watched_directory": {"path": str(cert.parent)},
                },
            }
        ]
    }


def serving_tls(config: ec.Config, sds_path: Path) -> ec.Config:
    """A copy of ``config`` whose listener serves TLS with the certificate in ``sds_path``."""
    result = copy.deepcopy(config)
    result["node"] = dict(NODE)
    sds_file = sds_path.resolve()
    transport = {
        "name": "envoy.transport_sockets.tls",
        "typed_config": {
            "@type": _TLS_CONTEXT_TYPE,
            "common_tls_context": {
                "alpn_protocols": list(ALPN),
                "tls_params": {"tls_minimum_protocol_version": MIN_VERSION},
                "tls_certificate_sds_secret_configs": [
                    {
                        "name": SECRET_NAME,
                        "sds_config": {
                            "path_config_source": {"path": str(sds_file)},
                            "resource_api_version": "V3",
                        },
                    }
                ],
            },
        },
    }
    for chain in ec.listener(result)["filter_chains"]:
        chain["transport_socket"] = copy.deepcopy(transport)
    return result


def with_tls(config: ec.Config, files: TlsFiles, config_path: Path) -> ec.Config:
    """``config`` serving TLS when ``files`` name a certificate (its SDS file written now)."""
    if files.tls_cert_file is None or files.tls_key_file is None:
        return config
    for path in (files.tls_cert_file, files.tls_key_file):
        if not path.is_file():
            raise ValueError(f"TLS file {path} does not exist")
    sds_path = sds_path_for(config_path)
    sds_path.parent.mkdir(parents=True, exist_ok=True)
    sds_path.write_text(ec.dump(sds_document(files.tls_cert_file, files.tls_key_file)))
    return serving_tls(config, sds_path)

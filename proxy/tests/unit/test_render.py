"""ds_proxy.render and ds_proxy.settings: the production config from the environment."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import yaml
from ds_proxy import envoy_config as ec
from ds_proxy.local_cert import install, make_certificate
from ds_proxy.paths import PROD_TEMPLATE
from ds_proxy.render import (
    check_live_timeouts,
    check_upstream_idle_timeout,
    main,
    render_production,
)
from ds_proxy.settings import ProxySettings
from pydantic import ValidationError

if TYPE_CHECKING:
    from pathlib import Path

TEMPLATE = ec.load(PROD_TEMPLATE)
ENV = {
    "DS_PROXY__ISSUER": "https://login.example.com/",
    "DS_PROXY__AUDIENCES": "durable-streams, admin-console",
    "DS_PROXY__JWKS_URI": "https://login.example.com:8443/keys",
}


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)


def settings(**values: object) -> ProxySettings:
    base: dict[str, object] = {
        "issuer": "https://login.example.com/",
        "audiences": ("durable-streams",),
        "jwks_uri": "https://login.example.com/.well-known/jwks.json",
    }
    return ProxySettings(**{**base, **values})  # type: ignore[arg-type]


def test_settings_from_the_environment(env: None) -> None:
    loaded = ProxySettings()  # type: ignore[call-arg]
    assert loaded.audiences == ("durable-streams", "admin-console")
    assert loaded.upstream_host == "ds-server"
    assert loaded.listen_port == 8080


def test_issuer_audiences_and_jwks_are_required(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValidationError) as error:
        ProxySettings()  # type: ignore[call-arg]
    missing = {entry["loc"][0] for entry in error.value.errors()}
    assert missing == {"issuer", "audiences", "jwks_uri"}


@pytest.mark.parametrize("uri", ["ftp://x/keys", "not a url", "http://idp.internal/keys"])
def test_jwks_uri_must_be_https_unless_loopback(uri: str) -> None:
    with pytest.raises(ValidationError):
        settings(jwks_uri=uri)


def test_render_fills_every_provider() -> None:
    config = render_production(
        TEMPLATE,
        settings(audiences=("a", "b"), clock_skew_secs=10, jwks_cache_secs=60),
    )
    for provider in ec.jwt_providers(config).values():
        assert provider["issuer"] == "https://login.example.com/"
        assert provider["audiences"] == ["a", "b"]
        assert provider["clock_skew_seconds"] == 10
        assert provider["remote_jwks"]["http_uri"]["uri"].endswith("/.well-known/jwks.json")
        assert provider["remote_jwks"]["cache_duration"] == "60s"
    # The template itself is untouched.
    assert ec.jwt_providers(TEMPLATE)["ds_bearer"]["issuer"] != "https://login.example.com/"


def test_render_points_the_jwks_cluster_at_the_uri() -> None:
    config = render_production(TEMPLATE, settings(jwks_uri="https://idp.example.com:8443/k"))
    assert ec.endpoint_address(config, ec.JWKS_CLUSTER) == {
        "address": "idp.example.com",
        "port_value": 8443,
    }
    tls = ec.cluster(config, ec.JWKS_CLUSTER)["transport_socket"]["typed_config"]
    assert tls["sni"] == "idp.example.com"


def test_loopback_http_jwks_has_no_tls() -> None:
    config = render_production(TEMPLATE, settings(jwks_uri="http://127.0.0.1:9000/jwks"))
    jwks = ec.cluster(config, ec.JWKS_CLUSTER)
    assert "transport_socket" not in jwks
    assert ec.endpoint_address(config, ec.JWKS_CLUSTER)["port_value"] == 9000


def test_render_sets_addresses_and_idle_timeout() -> None:
    config = render_production(
        TEMPLATE,
        settings(
            upstream_host="ds.internal", upstream_port=5000, listen_port=9090, admin_port=9902
        ),
    )
    assert ec.endpoint_address(config, ec.UPSTREAM_CLUSTER) == {
        "address": "ds.internal",
        "port_value": 5000,
    }
    assert ec.listener(config)["address"]["socket_address"]["port_value"] == 9090
    assert config["admin"]["address"]["socket_address"]["port_value"] == 9902
    assert ec.http_connection_manager(config)["stream_idle_timeout"] == "120s"


def test_idle_timeout_must_exceed_the_servers_live_timeouts() -> None:
    check_live_timeouts(settings(), {})
    with pytest.raises(ValueError, match="SSE_RECONNECT"):
        check_live_timeouts(settings(), {"DS_SERVER__SSE_RECONNECT_INTERVAL_SECS": "120"})
    with pytest.raises(ValueError, match="LONG_POLL"):
        check_live_timeouts(
            settings(stream_idle_timeout_secs=20), {"DS_SERVER__SSE_RECONNECT_INTERVAL_SECS": "10"}
        )


def test_envoy_closes_idle_upstream_connections_before_the_server_does() -> None:
    config = ec.load(PROD_TEMPLATE)
    check_upstream_idle_timeout(config, {})
    check_upstream_idle_timeout(config, {"DS_SERVER__KEEP_ALIVE_SECS": "61"})
    with pytest.raises(ValueError, match="KEEP_ALIVE"):
        check_upstream_idle_timeout(config, {"DS_SERVER__KEEP_ALIVE_SECS": "60"})


def test_cli_prints_the_config(env: None, capsys: pytest.CaptureFixture[str]) -> None:
    main([])
    out = capsys.readouterr().out
    assert out.startswith("# Rendered by ds-proxy-render")
    config = yaml.safe_load(out)
    assert ec.jwt_providers(config)["ds_bearer"]["audiences"] == [
        "durable-streams",
        "admin-console",
    ]


def test_cli_writes_a_file(env: None, tmp_path: Path) -> None:
    out = tmp_path / "envoy.yaml"
    main(["--out", str(out)])
    assert ec.jwt_providers(ec.load(out))["ds_bearer"]["issuer"] == "https://login.example.com/"


def test_cli_reports_missing_settings(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(SystemExit) as exit_info:
        main([])
    assert exit_info.value.code == 2
    assert "issuer" in capsys.readouterr().err


def test_limits_come_from_the_settings() -> None:
    rendered = render_production(TEMPLATE, settings(appends_per_sec=20, read_burst=7))
    descriptors = ec.http_filter(rendered, "envoy.filters.http.local_ratelimit")["descriptors"]
    assert descriptors[0]["token_bucket"]["tokens_per_fill"] == 2
    assert descriptors[1]["token_bucket"]["max_tokens"] == 7


def test_cli_with_tls_writes_the_certificates_sds_file_beside_the_config(
    env: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    cert, key = install(tmp_path / "certs", *make_certificate())
    monkeypatch.setenv("DS_PROXY__TLS_CERT_FILE", str(cert))
    monkeypatch.setenv("DS_PROXY__TLS_KEY_FILE", str(key))
    out = tmp_path / "etc" / "envoy.yaml"
    out.parent.mkdir()
    main(["--out", str(out)])
    listener = ec.listener(ec.load(out))
    context = listener["filter_chains"][0]["transport_socket"]["typed_config"]
    sds = context["common_tls_context"]["tls_certificate_sds_secret_configs"][0]
    sds_file = sds["sds_config"]["path_config_source"]["path"]
    assert sds_file == str(tmp_path / "etc" / "envoy.tls-sds.yaml")
    secret = yaml.safe_load((tmp_path / "etc" / "envoy.tls-sds.yaml").read_text())
    assert secret["resources"][0]["tls_certificate"]["certificate_chain"] == {"filename": str(cert)}


def test_cli_with_tls_needs_an_output_file(
    env: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cert, key = install(tmp_path, *make_certificate())
    monkeypatch.setenv("DS_PROXY__TLS_CERT_FILE", str(cert))
    monkeypatch.setenv("DS_PROXY__TLS_KEY_FILE", str(key))
    with pytest.raises(SystemExit) as exit_info:
        main([])
    assert exit_info.value.code == 2
    assert "--out" in capsys.readouterr().err


def test_cli_with_a_missing_certificate_says_so(
    env: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DS_PROXY__TLS_CERT_FILE", str(tmp_path / "none.crt"))
    monkeypatch.setenv("DS_PROXY__TLS_KEY_FILE", str(tmp_path / "none.key"))
    with pytest.raises(SystemExit) as exit_info:
        main(["--out", str(tmp_path / "envoy.yaml")])
    assert exit_info.value.code == 2
    assert "none.crt does not exist" in capsys.readouterr().err

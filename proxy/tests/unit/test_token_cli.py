"""``ds-token``: the command line mints what it is asked for."""

from __future__ import annotations

import json
from typing import Any

import jwt
import pytest
from ds_proxy.keys import load_private_key
from ds_proxy.token_cli import main
from ds_proxy.tokens import TEST_AUDIENCE

PUBLIC = load_private_key().public_key()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    main(list(argv))
    return capsys.readouterr().out.strip()


def claims_of(token: str) -> dict[str, Any]:
    decoded: dict[str, Any] = jwt.decode(
        token,
        PUBLIC,
        algorithms=["RS256"],
        audience=TEST_AUDIENCE,
        options={"verify_exp": False, "verify_nbf": False, "verify_aud": False},
    )
    return decoded


def test_default_token_verifies(capsys: pytest.CaptureFixture[str]) -> None:
    token = run(capsys)
    claims = jwt.decode(token, PUBLIC, algorithms=["RS256"], audience=TEST_AUDIENCE)
    assert claims["sub"] == "test-user"
    assert claims["ds"] == {"read": ["*"], "write": ["*"]}


def test_custom_sub_and_bucket(capsys: pytest.CaptureFixture[str]) -> None:
    claims = claims_of(run(capsys, "--sub", "alice", "--bucket", "chat,agents"))
    assert claims["sub"] == "alice"
    assert claims["ds"] == {"read": ["chat", "agents"], "write": ["chat", "agents"]}


def test_separate_read_and_write(capsys: pytest.CaptureFixture[str]) -> None:
    claims = claims_of(run(capsys, "--read", "chat", "--write", "inbox"))
    assert claims["ds"] == {"read": ["chat"], "write": ["inbox"]}


def test_no_scopes_and_no_sub(capsys: pytest.CaptureFixture[str]) -> None:
    claims = claims_of(run(capsys, "--no-scopes", "--no-sub"))
    assert "ds" not in claims
    assert "sub" not in claims


@pytest.mark.parametrize(
    ("kind", "error"),
    [
        ("expired", jwt.ExpiredSignatureError),
        ("not-yet-valid", jwt.ImmatureSignatureError),
        ("wrong-issuer", jwt.InvalidIssuerError),
        ("wrong-audience", jwt.InvalidAudienceError),
    ],
)
def test_kinds(kind: str, error: type[Exception], capsys: pytest.CaptureFixture[str]) -> None:
    token = run(capsys, "--kind", kind)
    with pytest.raises(error):
        jwt.decode(
            token,
            PUBLIC,
            algorithms=["RS256"],
            audience=TEST_AUDIENCE,
            issuer="durable-streams-test",
        )


def test_forge(capsys: pytest.CaptureFixture[str]) -> None:
    token = run(capsys, "--forge", "alg-none", "--sub", "mallory")
    assert token.endswith(".")
    assert jwt.decode(token, options={"verify_signature": False})["sub"] == "mallory"


def test_claims_output(capsys: pytest.CaptureFixture[str]) -> None:
    claims = json.loads(run(capsys, "--claims", "--audience", "a,b", "--ttl", "60"))
    assert claims["aud"] == ["a", "b"]
    assert claims["exp"] - claims["iat"] == 60


def test_console_scripts_resolve() -> None:
    """Every ``[project.scripts]`` entry of ds-proxy names an importable callable."""
    import importlib
    import tomllib

    from ds_proxy.paths import PROXY_ROOT

    scripts = tomllib.loads((PROXY_ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert set(scripts) == {"ds-token", "ds-token-service", "ds-proxy-render", "ds-proxy-serve"}
    for target in scripts.values():
        module, _, attribute = target.partition(":")
        assert callable(getattr(importlib.import_module(module), attribute))

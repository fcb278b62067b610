"""Settings from ``DS_*`` variables, and errors that name the variable."""

from __future__ import annotations

import subprocess
import sys

import pytest
from ds_server.settings import SettingsError, load_settings


def test_variables_fill_their_sections(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DS_SERVER__PORT", "8000")
    monkeypatch.setenv("DS_STORAGE__MODE", "file-durable")
    monkeypatch.setenv("DS_HTTP__CORS_ORIGINS", "https://a.example, https://b.example")
    settings = load_settings()
    assert settings.server.port == 8000
    assert settings.storage.mode == "file-durable"
    assert settings.http.cors_origins == ["https://a.example", "https://b.example"]


@pytest.mark.parametrize(
    ("name", "value", "reason"),
    [
        ("DS_SERVER__PORT", "65536", "less than or equal to 65535"),
        ("DS_SERVER__PORT", "http", "valid integer"),
        ("DS_SERVER__LONG_POLL_TIMEOUT_SECS", "0", "greater than 0"),
        ("DS_AUTH__MODE", "on", "'off' or 'gateway'"),
        ("DS_LIMITS__MAX_STREAM_BYTES", "-1", "greater than 0"),
        ("DS_LIMITS__MAX_RETAINED_BYTES", "0", "greater than 0"),
        (
            "DS_STORAGE__MODE",
            "mysql",
            "not one of: file-durable, file-fast, memory, postgres, sqlite",
        ),
        (
            "DS_STORAGE__MODE",
            "Memory",
            "not one of: file-durable, file-fast, memory, postgres, sqlite",
        ),
        ("DS_STORAGE__POSTGRES_SCHEMA", "Public", "should match pattern"),
        ("DS_LOG__FLUSH_SECS", "0", "greater than 0"),
    ],
)
def test_bad_values_name_the_variable(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, reason: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as raised:
        load_settings()
    message = str(raised.value)
    assert message.startswith(f"{name}={value!r}: ")
    assert reason in message


def test_the_reference_stacks_stream_limit_is_the_retained_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Deployments that set the reference stack's name keep their limit,
    # now counted on what a stream retains; the new name wins when both are set.
    monkeypatch.setenv("DS_LIMITS__MAX_STREAM_BYTES", "5000")
    assert load_settings().limits.max_retained_bytes == 5000
    monkeypatch.setenv("DS_LIMITS__MAX_RETAINED_BYTES", "7000")
    assert load_settings().limits.max_retained_bytes == 7000


def test_the_postgres_backend_needs_its_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DS_STORAGE__MODE", "postgres")
    with pytest.raises(SettingsError) as raised:
        load_settings()
    assert str(raised.value) == (
        "DS_STORAGE__POSTGRES_URL='': required with DS_STORAGE__MODE=postgres"
    )
    monkeypatch.setenv("DS_STORAGE__POSTGRES_URL", "postgresql://db.example/streams")
    settings = load_settings()
    assert (settings.storage.postgres_schema, settings.storage.postgres_pool_size) == (
        "ds_server",
        8,
    )


def test_every_bad_value_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DS_SERVER__PORT", "http")
    monkeypatch.setenv("DS_AUTH__MODE", "on")
    with pytest.raises(SettingsError) as raised:
        load_settings()
    assert "DS_SERVER__PORT=" in str(raised.value)
    assert "DS_AUTH__MODE=" in str(raised.value)


def test_a_section_that_is_not_json_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DS_SERVER", "{port")
    with pytest.raises(SettingsError, match=r"^DS_SERVER: not a JSON object"):
        load_settings()


def test_cli_rejects_a_bad_value_with_a_short_message() -> None:
    env = {"DS_SERVER__PORT": "not-a-port", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-m", "ds_server"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert "DS_SERVER__PORT='not-a-port'" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_app_loads_no_plugin_it_does_not_use() -> None:
    # Litestar would load its pydantic and attrs plugins whenever those
    # packages are installed: ~2.7 MiB of every server's resident memory.
    script = (
        "import sys\n"
        "from ds_server import create_app\n"
        "from ds_server.settings import Settings, StorageSection\n"
        "create_app(Settings(storage=StorageSection(mode='memory')))\n"
        "loaded = ('litestar.plugins.pydantic', 'litestar.plugins.attrs', 'attr', 'attrs')\n"
        "print(sorted(m for m in sys.modules if m.startswith(loaded)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"

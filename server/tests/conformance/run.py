"""Run the official conformance suite against a real ds-server process.

Usage: python server/tests/conformance/run.py [--compiled] [BACKEND ...]

``cluster`` is not a backend but a deployment: two replicas on the postgres
store behind the Envoy gateway, with a token for every bucket. Envoy
spreads the suite's streams over both by path, as it does in production
(forks and subscriptions cross replicas); ``cluster-round-robin`` sends
consecutive requests to the two in turn, so even one stream's requests
alternate replicas.

For each backend: start ``ds-server`` on a free loopback port (with a fresh
data directory; for ``postgres``, a Postgres of its own), wait for /healthz,
run the vitest suite in conformance/, stop the server. Exits non-zero if any run fails.

The backends run side by side (``CONFORMANCE_JOBS``, default 2): a run
spends most of its time waiting (long-polls of up to a second, SSE
timeouts), not computing. Each run's output is printed whole when it ends.

``--compiled`` first checks that the server runs the compiled build (put on
``PYTHONPATH`` by ``make conformance-compiled``), so a build that failed to
load can't pass as plain Python.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.postgres import postgres_env, running_postgres
from support.server_process import ServerProcess

ROOT = Path(__file__).resolve().parents[3]
SUITE_DIR = ROOT / "conformance"
LONG_POLL_SECS = "1"
# Deployments the suite can run against, and how Envoy balances each.
CLUSTERS = {"cluster": "MAGLEV", "cluster-round-robin": "ROUND_ROBIN"}


def run_vitest(url: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
    vitest = SUITE_DIR / "node_modules" / ".bin" / "vitest"
    return subprocess.run(
        [str(vitest), "run"],
        cwd=SUITE_DIR,
        env={
            **os.environ,
            "CONFORMANCE_TEST_URL": url,
            "CONFORMANCE_LONG_POLL_MS": str(int(float(LONG_POLL_SECS) * 1000)),
            "FORCE_COLOR": "0",
            **({"CONFORMANCE_TOKEN": token} if token else {}),
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )


def run_suite(backend: str) -> int:
    """Run the suite against one backend; its output is printed when it ends."""
    started = time.monotonic()
    if backend in CLUSTERS:
        url, completed = run_on_cluster(CLUSTERS[backend])
    else:
        with contextlib.ExitStack() as stack:
            data_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="ds-conformance-"))
            env = {
                "DS_STORAGE__MODE": backend,
                "DS_STORAGE__DATA_DIR": data_dir,
                # The suite requires a long-poll timeout of at most 1 s.
                "DS_SERVER__LONG_POLL_TIMEOUT_SECS": LONG_POLL_SECS,
            }
            if backend == "postgres":
                env |= postgres_env(stack.enter_context(running_postgres()))
            with ServerProcess(env=env) as server:
                url, completed = server.url, run_vitest(server.url)
    outcome = "passed" if completed.returncode == 0 else "FAILED"
    print(
        f"== conformance: backend={backend} url={url}\n{completed.stdout}"
        f"== conformance: backend={backend} {outcome} in {time.monotonic() - started:.0f}s",
        flush=True,
    )
    return completed.returncode


def run_on_cluster(balance: str) -> tuple[str, subprocess.CompletedProcess[str]]:
    """The suite through Envoy against two replicas on one postgres store."""
    from ds_stack.cluster import Cluster

    env = {"DS_SERVER__LONG_POLL_TIMEOUT_SECS": LONG_POLL_SECS}
    with Cluster(replicas=2, balance=balance, server_env=env) as cluster:
        return cluster.url, run_vitest(cluster.url, cluster.token)


def require_compiled() -> None:
    described = subprocess.run(
        [sys.executable, "-m", "ds_server", "--version"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    print(f"== {described}", flush=True)
    if "(compiled)" not in described:
        sys.exit("the compiled ds-server did not load; is its build on PYTHONPATH?")


def main() -> None:
    args = sys.argv[1:]
    if "--compiled" in args:
        args.remove("--compiled")
        require_compiled()
    backends = args or ["memory"]
    jobs = max(1, int(os.environ.get("CONFORMANCE_JOBS", "2")))
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        codes = list(pool.map(run_suite, backends))
    failed = [backend for backend, code in zip(backends, codes, strict=True) if code != 0]
    if failed:
        print(f"conformance failed for: {', '.join(failed)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()

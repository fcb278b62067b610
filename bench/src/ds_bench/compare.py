"""``ds-bench compare``: every scenario against ds-server and the Node reference, interleaved."""

from __future__ import annotations

import resource
import shutil
import tempfile
import time
import traceback
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ds_bench import (
    _machine,
    catchup,
    durable,
    fanout,
    large,
    memory,
    memory_gateway,
    rtt,
    slow_fanout,
    throughput,
)
from ds_bench.configurations import CONFIGURATIONS
from ds_bench.gateway import BehindGateway
from ds_bench.model import IMPL_LABELS
from ds_bench.servers import DsServer, NodeServer

if TYPE_CHECKING:
    from collections.abc import Callable

    from ds_bench.configurations import Configuration
    from ds_bench.model import Impl, Options, Sample, Scenario
    from ds_bench.servers import ServerProcess

SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        rtt.SCENARIO,
        throughput.CLIENT,
        throughput.POST,
        large.SCENARIO,
        fanout.SCENARIO,
        slow_fanout.SCENARIO,
        catchup.SCENARIO,
        memory.SSE,
        memory_gateway.SCENARIO,
        memory.STREAMS,
        durable.SCENARIO,
    )
}
ALIASES: dict[str, tuple[str, ...]] = {
    "all": tuple(SCENARIOS),
    "memory": ("mem-sse", "mem-gateway", "mem-streams"),
    "throughput": ("client", "post"),
}


@dataclass(frozen=True, slots=True)
class Run:
    """One scenario against one server in one repetition: a sample, or why there is none."""

    scenario: str
    impl: Impl
    repetition: int
    server_mode: str
    sample: Sample | None
    error: str | None = None
    # Share of the machine other processes used meanwhile (see _machine).
    background: float = 0.0
    # Runs made to get this one; earlier ones were disturbed by other processes.
    attempts: int = 1
    # ds-server's configuration (configurations.CONFIGURATIONS), or "" for the
    # Node reference; "gateway" when requests went through Envoy, else "direct".
    config: str = ""
    route: str = "direct"


@dataclass(frozen=True, slots=True)
class Side:
    """One server of a comparison: ds-server in a configuration, or the Node reference."""

    impl: Impl
    config: str  # a configuration's name for ds-server, "" for Node
    gateway: bool

    @property
    def route(self) -> str:
        return "gateway" if self.gateway else "direct"


def sides(configs: tuple[Configuration, ...]) -> list[Side]:
    """ds-server in each configuration, then Node directly and/or behind Envoy as they need."""
    found = [Side("ds", c.name, c.gateway) for c in configs]
    for gateway in (False, True):
        if any(c.gateway == gateway for c in configs):
            found.append(Side("node", "", gateway))
    return found


def select(names: str) -> list[Scenario]:
    """Scenarios by comma-separated names or aliases, in the canonical order."""
    wanted: set[str] = set()
    for name in (n.strip() for n in names.split(",") if n.strip()):
        if name in ALIASES:
            wanted.update(ALIASES[name])
        elif name in SCENARIOS:
            wanted.add(name)
        else:
            known = ", ".join([*SCENARIOS, *ALIASES])
            raise ValueError(f"unknown scenario {name!r}; known: {known}")
    return [s for name, s in SCENARIOS.items() if name in wanted]


def raise_fd_limit() -> None:
    """Lift the soft open-files limit to the hard one; servers and generators inherit it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def server_for(side: Side, scenario: Scenario, options: Options, data_dir: Path) -> ServerProcess:
    """A fresh server of ``side`` in the mode ``scenario`` needs."""
    mode = options.durable_backend if scenario.durable else "memory"
    server: ServerProcess
    if side.impl == "ds":
        config = CONFIGURATIONS[side.config]
        server = DsServer(mode, data_dir, configuration=config, compiled_dir=options.compiled_dir)
    elif options.baseline is not None:
        # The same configuration (flags, settings, request log) as the build it is
        # compared with, only the other build: a before/after of code, not of settings.
        config = options.configurations[0]
        server = DsServer(
            mode, data_dir, configuration=config, compiled_dir=options.baseline, label="baseline"
        )
    else:
        server = NodeServer(data_dir if scenario.durable else None)
    return BehindGateway(server) if side.gateway else server


def run_one(scenario: Scenario, side: Side, repetition: int, options: Options) -> Run:
    """Start a fresh server, run the scenario once, stop the server; never raises."""
    impl = side.impl
    data_dir = Path(tempfile.mkdtemp(prefix=f"ds-bench-{impl}-", dir=options.data_root))
    server = server_for(side, scenario, options, data_dir)
    before = _machine.snapshot()
    sample: Sample | None = None
    error: str | None = None
    try:
        with server:
            sample = scenario.run(server, impl, options)
    except Exception as exc:
        error = "".join(traceback.format_exception_only(exc)).strip()
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    background = _machine.background_share(before, _machine.snapshot())
    return Run(
        scenario.name,
        impl,
        repetition,
        server.label,
        sample,
        error,
        background,
        config=side.config,
        route=side.route,
    )


def compare(
    scenarios: list[Scenario],
    repetitions: int,
    options: Options,
    log: Callable[[str], None] = print,
) -> list[Run]:
    """Every scenario against both servers, ``repetitions`` times.

    Within a repetition each scenario runs against every side in turn
    (ds-server in each configuration of ``options``, and the Node
    reference); the order reverses between repetitions (ds, node / node,
    ds …) so no server always runs first, on a warmer or cooler machine.
    Behind the gateway only the scenarios that can send its token run.
    Every run first waits for a quiet machine and is repeated if other
    processes got busy while it ran (see ``Options.max_background``).
    """
    raise_fd_limit()
    options.data_root.mkdir(parents=True, exist_ok=True)
    runs: list[Run] = []
    quiet = _Quiet(options, log)
    every = sides(options.configurations)
    for repetition in range(repetitions):
        order = every if repetition % 2 == 0 else every[::-1]
        for scenario in scenarios:
            for side in order:
                if side.gateway and not scenario.through_gateway:
                    continue
                runs.append(_run_clean(scenario, side, repetition, options, repetitions, quiet))
    return runs


class _Quiet:
    """Waits for a quiet machine before runs, within one budget for the whole comparison."""

    def __init__(self, options: Options, log: Callable[[str], None]) -> None:
        self.threshold = options.max_background
        self.budget = options.quiet_budget_s
        self.log = log

    def wait(self) -> bool:
        """Whether the machine is quiet now (waiting for it while budget remains)."""
        started = time.perf_counter()
        share = _machine.wait_until_quiet(self.threshold, max(0.0, self.budget))
        self.budget -= time.perf_counter() - started
        if share > self.threshold:
            self.log(f"  the machine stays busy ({share * 100:.0f} %); running anyway")
            return False
        return True


def _run_clean(
    scenario: Scenario,
    side: Side,
    repetition: int,
    options: Options,
    repetitions: int,
    quiet: _Quiet,
) -> Run:
    """One run on a quiet machine: wait for quiet first, repeat if others got busy meanwhile."""
    attempt = 0
    while True:
        was_quiet = quiet.wait()
        started = time.perf_counter()
        run = run_one(scenario, side, repetition, options)
        quiet.log(_describe(run, repetitions, time.perf_counter() - started))
        disturbed = run.background > options.max_background
        if not disturbed or not was_quiet or attempt >= options.retries or quiet.budget <= 0:
            return replace(run, attempts=attempt + 1)
        attempt += 1
        quiet.log(f"  other processes used {run.background * 100:.0f} % meanwhile; repeating")


def _describe(run: Run, repetitions: int, seconds: float) -> str:
    who = run.config or IMPL_LABELS[run.impl]
    if run.route == "gateway":
        who += " via Envoy"
    head = f"[{run.repetition + 1}/{repetitions}] {run.scenario:<11} {who:<24}"
    if run.sample is None:
        return f"{head} FAILED ({seconds:.0f} s): {run.error}"
    values = "  ".join(f"{key}={value:,.2f}" for key, value in run.sample.values.items())
    gen = run.sample.generator
    return (
        f"{head} {values}  (generator {gen.cpu_s / gen.wall_s:.2f} cores, "
        f"others {run.background * 100:.0f} %, {seconds:.0f} s)"
    )

"""What a comparison scenario is, what it measures, and what one run of it yields."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from ds_bench.configurations import COMPILED_DIR, CONFIGURATIONS

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from ds_bench._generators import Usage
    from ds_bench.configurations import Configuration
    from ds_bench.servers import ServerProcess

Kind = Literal["throughput", "latency", "memory"]
Impl = Literal["ds", "node"]

IMPL_LABELS: dict[Impl, str] = {"ds": "ds-server", "node": "Node reference"}


@dataclass(frozen=True, slots=True)
class Metric:
    """One number a scenario reports; ``kind`` decides which way is better."""

    key: str
    label: str
    unit: str
    kind: Kind
    # An absolute bound besides the ratio target (e.g. fan-out p99 < 50 ms).
    absolute_max: float | None = None
    # False for figures that are not a contest with the reference: a ratio of
    # two phases of one run, or what the gateway in front uses. Their only
    # target is ``absolute_max`` (at most), if any.
    versus_node: bool = True

    @property
    def higher_is_better(self) -> bool:
        return self.kind == "throughput"


@dataclass(frozen=True, slots=True)
class Options:
    """Settings shared by every scenario of one comparison run."""

    quick: bool
    durable_backend: str
    data_root: Path
    # Messages per second the fan-out writer appends.
    fanout_rate: float = 5.0
    # Each run waits for the machine to be this quiet first; a run during which
    # other processes used more is repeated (up to ``retries`` times). All the
    # waiting of one comparison together stays within ``quiet_budget_s``.
    max_background: float = 0.10
    retries: int = 2
    quiet_budget_s: float = 600.0
    # A directory of another ds-server build (a compiled wheel unpacked, as
    # ``make wheel`` leaves it) to run in the reference's place: a before/after
    # comparison of two ds-server revisions, interleaved in one run.
    baseline: Path | None = None
    # ds-server's configurations (``configurations.CONFIGURATIONS``), each
    # compared with the Node reference; compiled ones run the build in ``compiled_dir``.
    configurations: tuple[Configuration, ...] = (CONFIGURATIONS["image"],)
    compiled_dir: Path = COMPILED_DIR


@dataclass(frozen=True, slots=True)
class Sample:
    """One scenario against one server, once: its metric values and the CPU used."""

    values: dict[str, float]
    generator: Usage
    server_cpu_s: float
    notes: dict[str, float | str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Scenario:
    """A scenario: its metrics, whether it needs a durable server, and how to run it once."""

    name: str
    title: str
    metrics: tuple[Metric, ...]
    run: Callable[[ServerProcess, Impl, Options], Sample]
    durable: bool = False
    # Whether it can run behind the gateway (it sends the token the server needs).
    through_gateway: bool = False

from __future__ import annotations

import sys

import pytest
from ds_bench._generators import Generator, Usage, run_generator


def test_usage_combines_concurrent_and_sequential_processes() -> None:
    assert Usage(1.0, 5.0).alongside(Usage(2.0, 4.0)) == Usage(3.0, 5.0)
    assert Usage(1.0, 5.0).then(Usage(2.0, 4.0)) == Usage(3.0, 9.0)


def test_reported_usage_wins_over_rusage() -> None:
    code = 'print(\'{"result": 1, "usage": {"cpu_s": 0.25, "wall_s": 2.0}}\')'
    output, usage = run_generator([sys.executable, "-c", code], timeout=30)
    assert '"result": 1' in output
    assert usage == Usage(0.25, 2.0)


def test_rusage_when_nothing_is_reported() -> None:
    code = "sum(range(3_000_000)); print('done')"
    output, usage = run_generator([sys.executable, "-c", code], timeout=30)
    assert output.strip() == "done"
    assert usage.cpu_s > 0
    assert usage.wall_s >= usage.cpu_s * 0.5


def test_ready_line_then_hold_until_stdin_closes() -> None:
    code = "import sys; print('ready', flush=True); sys.stdin.read(); print('bye')"
    proc = Generator([sys.executable, "-c", code])
    assert proc.read_line(timeout=30) == "ready"
    output, _ = proc.finish(timeout=30)
    assert output.strip() == "bye"


def test_failing_generator_raises_with_its_stderr() -> None:
    code = "import sys; sys.stderr.write('broken'); sys.exit(3)"
    with pytest.raises(RuntimeError, match=r"failed \(3\)[\s\S]*broken"):
        run_generator([sys.executable, "-c", code], timeout=30)


def test_watchdog_kills_a_generator_that_hangs() -> None:
    with pytest.raises(RuntimeError, match="failed"):
        run_generator([sys.executable, "-c", "import time; time.sleep(60)"], timeout=0.5)

"""Where ds-sync's CPU goes during a measured window: py-spy attached to the running process.

``ds-bench sync --profile`` attaches ``py-spy record`` (sampling, non-blocking:
the process is never paused) to ds-sync for exactly the window whose CPU per
event is reported, writes the raw collapsed stacks next to the results
(``*.pyspy.txt``, for flame graphs; not committed), and prints and keeps the
top of the profile (``*.profile.txt``): packages and functions by their own
samples, and functions by the samples they were on the stack for.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

_RATE_HZ = 200
# "frame (file:line);frame (file:line) count" -> the frames without their line numbers.
_LINE = re.compile(r"^(?P<stack>.*) (?P<count>\d+)$")
_FRAME_LINE = re.compile(r":\d+\)$")
# "function (package/module.py)" -> "package".
_PACKAGE = re.compile(r"\((?:<frozen )?(?P<package>[^/)>]+)")


def py_spy() -> str:
    """The py-spy next to this interpreter (the bench dependency group installs it)."""
    found = Path(sys.executable).with_name("py-spy")
    if found.exists():
        return str(found)
    on_path = shutil.which("py-spy")
    if on_path is None:
        raise SystemExit("ds-bench sync --profile: py-spy is missing (make setup installs it)")
    return on_path


@contextlib.contextmanager
def recording(pid: int, path: Path) -> Iterator[None]:
    """Sample ``pid`` while the block runs; the raw collapsed stacks land in ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    command = [
        py_spy(),
        "record",
        "--pid",
        str(pid),
        "--format",
        "raw",
        "--output",
        str(path),
        "--rate",
        str(_RATE_HZ),
        "--nonblocking",
    ]
    recorder = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield
    finally:
        # py-spy writes what it sampled when interrupted.
        recorder.send_signal(signal.SIGINT)
        try:
            recorder.wait(timeout=30)
        except subprocess.TimeoutExpired:
            recorder.kill()
            recorder.wait()


def top(path: Path, count: int = 15) -> str:
    """The profile's top functions, by own samples and by samples on the stack, as text."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    packages: Counter[str] = Counter()
    total = 0
    for line in path.read_text(errors="replace").splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        samples = int(match["count"])
        frames = [_FRAME_LINE.sub(")", frame) for frame in match["stack"].split(";")]
        total += samples
        own[frames[-1]] += samples
        package = _PACKAGE.search(frames[-1])
        packages[package["package"] if package else frames[-1]] += samples
        for frame in set(frames):
            inclusive[frame] += samples
    if total == 0:
        return f"{path.name}: no samples\n"
    lines = [f"{path.name}: {total:,} samples at {_RATE_HZ} Hz", "", "own samples by package:"]
    lines += [f"  {n / total:6.1%}  {name}" for name, n in packages.most_common(count)]
    lines += ["", "own samples:"]
    lines += [f"  {n / total:6.1%}  {frame}" for frame, n in own.most_common(count)]
    # Frames on (nearly) every stack, the interpreter's and the event loop's, say nothing.
    telling = [(f, n) for f, n in inclusive.most_common() if n < 0.9 * total]
    lines += ["", "on the stack (below the event loop):"]
    lines += [f"  {n / total:6.1%}  {frame}" for frame, n in telling[:count]]
    return "\n".join(lines) + "\n"
